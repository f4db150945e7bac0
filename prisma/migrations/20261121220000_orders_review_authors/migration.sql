-- Orders and their items, and reviews tied to their authors.

-- A review outlives its author: deleting the user leaves it, without an author.
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_author_id_fkey" FOREIGN KEY ("author_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- CreateEnum
CREATE TYPE "order_status" AS ENUM ('pending', 'paid', 'shipped', 'delivered', 'cancelled');

-- CreateTable
CREATE TABLE "orders" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "status" "order_status" NOT NULL DEFAULT 'pending',
    "note" VARCHAR(500),
    "total" DECIMAL(15,2) NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "order_items" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "product_id" UUID,
    "quantity" INTEGER NOT NULL,
    "unit_price" DECIMAL(12,2) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "order_items_pkey" PRIMARY KEY ("id")
);

-- CreateIndex: a user's orders, in id order, for owner-scoped lists.
CREATE INDEX "orders_user_id_id_idx" ON "orders"("user_id", "id");

-- CreateIndex
CREATE INDEX "orders_created_at_id_idx" ON "orders"("created_at", "id");

-- CreateIndex
CREATE INDEX "order_items_order_id_id_idx" ON "order_items"("order_id", "id");

-- CreateIndex
CREATE INDEX "order_items_product_id_idx" ON "order_items"("product_id");

-- AddForeignKey: a user with orders cannot be deleted (409); the shop keeps its order history.
ALTER TABLE "orders" ADD CONSTRAINT "orders_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey: an item keeps its unit price when its product is deleted, and loses the link.
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_product_id_fkey" FOREIGN KEY ("product_id") REFERENCES "products"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- An order's total is the sum of its items, kept by the database in the same transaction as the
-- item's write, so no reader sees one without the other. Changing it changes the order's
-- representation: updated_at moves too (forward, by at least a millisecond), so ETags follow.
CREATE OR REPLACE FUNCTION "order_items_maintain_total"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE "orders" SET "total" = "total" - OLD."quantity" * OLD."unit_price",
           "updated_at" = greatest(date_trunc('milliseconds', clock_timestamp()), "updated_at" + interval '1 millisecond')
     WHERE "id" = OLD."order_id";
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE "orders" SET "total" = "total" + NEW."quantity" * NEW."unit_price",
           "updated_at" = greatest(date_trunc('milliseconds', clock_timestamp()), "updated_at" + interval '1 millisecond')
     WHERE "id" = NEW."order_id";
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "order_items_total" AFTER INSERT OR UPDATE OF "quantity", "unit_price", "order_id" OR DELETE ON "order_items"
  FOR EACH ROW EXECUTE FUNCTION "order_items_maintain_total"();

-- A reference the database clears (ON DELETE SET NULL) changes the item's representation as much
-- as a write does: its updated_at moves too, so its ETag and Last-Modified follow.
CREATE OR REPLACE FUNCTION "touch_updated_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."updated_at" = greatest(NEW."updated_at", date_trunc('milliseconds', clock_timestamp()), OLD."updated_at" + interval '1 millisecond');
  RETURN NEW;
END
$$;

CREATE TRIGGER "reviews_author_cleared" BEFORE UPDATE OF "author_id" ON "reviews"
  FOR EACH ROW WHEN (NEW."author_id" IS NULL AND OLD."author_id" IS NOT NULL) EXECUTE FUNCTION "touch_updated_at"();

CREATE TRIGGER "order_items_product_cleared" BEFORE UPDATE OF "product_id" ON "order_items"
  FOR EACH ROW WHEN (NEW."product_id" IS NULL AND OLD."product_id" IS NOT NULL) EXECUTE FUNCTION "touch_updated_at"();
