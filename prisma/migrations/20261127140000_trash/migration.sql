-- The trash (DESIGN "Data over time"): a collection that declares one keeps a deleted item for its
-- days with the time it was deleted. Every read, list and write of live items adds
-- `"deleted_at" IS NULL`; the trash is the rest.
ALTER TABLE "products" ADD COLUMN "deleted_at" TIMESTAMPTZ(3);

-- The indexes a page is read from hold the live items only: a page stays an index-only read of
-- ids, whatever the trash holds. The same columns, so schema.prisma describes them as they were.
DROP INDEX "products_created_at_id_idx";
CREATE INDEX "products_created_at_id_idx" ON "products"("created_at", "id") WHERE "deleted_at" IS NULL;
DROP INDEX "products_price_id_idx";
CREATE INDEX "products_price_id_idx" ON "products"("price", "id") WHERE "deleted_at" IS NULL;
DROP INDEX "products_status_price_id_idx";
CREATE INDEX "products_status_price_id_idx" ON "products"("status", "price", "id") WHERE "deleted_at" IS NULL;
-- The trash itself, oldest first: its list, and what housekeeping purges.
CREATE INDEX "products_deleted_at_idx" ON "products"("deleted_at") WHERE "deleted_at" IS NOT NULL;

-- The kept row count (migration 20261126100000_row_counts) is of live items: a list without
-- filters shows those. A row counts when it is inserted or deleted live, and when it moves in or
-- out of the trash.
CREATE FUNCTION "row_counts_track_live"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta bigint;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT count(*) INTO delta FROM "inserted" WHERE "deleted_at" IS NULL;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT -count(*) INTO delta FROM "deleted" WHERE "deleted_at" IS NULL;
  ELSE
    delta := CASE WHEN NEW."deleted_at" IS NULL THEN 1 ELSE -1 END;
  END IF;
  IF delta <> 0 THEN
    INSERT INTO "row_counts" AS c VALUES (TG_TABLE_NAME, pg_backend_pid() % 64, delta)
      ON CONFLICT ("table_name", "slot") DO UPDATE SET "n" = c."n" + EXCLUDED."n";
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER "products_count_inserts" ON "products";
DROP TRIGGER "products_count_deletes" ON "products";
CREATE TRIGGER "products_count_inserts" AFTER INSERT ON "products" REFERENCING NEW TABLE AS "inserted" FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_track_live"();
CREATE TRIGGER "products_count_deletes" AFTER DELETE ON "products" REFERENCING OLD TABLE AS "deleted" FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_track_live"();
-- Only an update that moves an item in or out of the trash counts, row by row.
CREATE TRIGGER "products_count_trash" AFTER UPDATE OF "deleted_at" ON "products"
  FOR EACH ROW WHEN ((OLD."deleted_at" IS NULL) <> (NEW."deleted_at" IS NULL)) EXECUTE FUNCTION "row_counts_track_live"();
