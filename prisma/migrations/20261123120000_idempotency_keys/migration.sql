-- Idempotency-Key on POST (draft-ietf-httpapi-idempotency-key-header): per caller and key, the
-- fingerprint of the request and, once it is done, the response it got; kept 24 hours. A row
-- without a status is in flight until `locked_until` (its process may have died).

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "caller" VARCHAR(300) NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    "fingerprint" VARCHAR(64) NOT NULL,
    "status" INTEGER,
    "headers" JSONB,
    "body" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("caller","key")
);

-- CreateIndex
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");
