-- A product's review statistics are kept on its row, maintained by a trigger in the same
-- transaction as every review write, so reading a product is one indexed lookup.

-- AlterTable
ALTER TABLE "products" ADD COLUMN "review_count" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "rating_total" INTEGER NOT NULL DEFAULT 0;

-- Backfill from the reviews that exist.
UPDATE "products" p SET "review_count" = s.n, "rating_total" = s.total
  FROM (SELECT "product_id", count(*)::int AS n, sum("rating")::int AS total FROM "reviews" GROUP BY "product_id") s
 WHERE s."product_id" = p."id";

-- The trigger: remove the old row's contribution, add the new row's.
CREATE FUNCTION "reviews_maintain_product_stats"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE "products" SET "review_count" = "review_count" - 1, "rating_total" = "rating_total" - OLD."rating"
     WHERE "id" = OLD."product_id";
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE "products" SET "review_count" = "review_count" + 1, "rating_total" = "rating_total" + NEW."rating"
     WHERE "id" = NEW."product_id";
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "reviews_product_stats"
  AFTER INSERT OR DELETE OR UPDATE OF "rating", "product_id" ON "reviews"
  FOR EACH ROW EXECUTE FUNCTION "reviews_maintain_product_stats"();

-- CreateIndex: filtering by status and sorting by price, the shop's main listing.
CREATE INDEX "products_status_price_id_idx" ON "products"("status", "price", "id");
