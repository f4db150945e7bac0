-- An item's history (GET /{collection}/{id}/history) reads its events newest first: one index
-- seek per page instead of a scan of the whole log.
-- CreateIndex
CREATE INDEX "events_item_id_id_idx" ON "events"("item_id", "id");

-- The events of collections that keep their history longer than the change feed keeps events
-- (a collection's `history: { days }`): pruning moves them here rather than deleting them, so
-- that the feed, its 410 EVENTS_EXPIRED and the webhook deliveries keep EVENTS_RETENTION_DAYS
-- exactly. The columns are the events' own, without `tx`: nothing here is read in the feed's order.
-- CreateTable
CREATE TABLE "history_events" (
    "id" BIGINT NOT NULL,
    "type" VARCHAR(100) NOT NULL,
    "collection" VARCHAR(60) NOT NULL,
    "item_id" UUID NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "actor_id" UUID,
    "item" JSONB,
    "data" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "history_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex: an item's history, newest first.
CREATE INDEX "history_events_item_id_id_idx" ON "history_events"("item_id", "id");

-- CreateIndex: pruning by age.
CREATE INDEX "history_events_occurred_at_idx" ON "history_events"("occurred_at");
