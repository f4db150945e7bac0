-- A review changing a product's review statistics changes the product's representation, so it
-- also moves the product's updated_at: Last-Modified and If-Modified-Since (RFC 9110 §8.8.2)
-- follow it, and a conditional write that read the product before the review fails (412).
-- Like the service's own writes, updated_at only moves forward, by at least a millisecond.
CREATE OR REPLACE FUNCTION "reviews_maintain_product_stats"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE "products" SET "review_count" = "review_count" - 1, "rating_total" = "rating_total" - OLD."rating",
           "updated_at" = greatest(date_trunc('milliseconds', clock_timestamp()), "updated_at" + interval '1 millisecond')
     WHERE "id" = OLD."product_id";
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE "products" SET "review_count" = "review_count" + 1, "rating_total" = "rating_total" + NEW."rating",
           "updated_at" = greatest(date_trunc('milliseconds', clock_timestamp()), "updated_at" + interval '1 millisecond')
     WHERE "id" = NEW."product_id";
  END IF;
  RETURN NULL;
END
$$;
