-- The outbox: one row per committed change, written in the change's transaction
-- (src/events/outbox.ts), read by the change feed (src/events/feed.ts).

-- CreateTable
CREATE TABLE "events" (
    "id" BIGSERIAL NOT NULL,
    -- The writing transaction: the feed shows an event once every transaction that could still
    -- commit before it has ended (its visibility horizon), so a reader never skips one.
    "tx" xid8 NOT NULL DEFAULT pg_current_xact_id(),
    "type" VARCHAR(100) NOT NULL,
    "collection" VARCHAR(60) NOT NULL,
    "item_id" UUID NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_id" UUID,
    "data" JSONB NOT NULL,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex: the feed's order, (tx, id).
CREATE INDEX "events_tx_id_idx" ON "events"("tx", "id");

-- CreateIndex: retention prunes by age.
CREATE INDEX "events_occurred_at_idx" ON "events"("occurred_at");

