-- The row count of each top-level collection's table, kept by statement triggers, so that a list
-- without filters has its exact total for the cost of reading a few rows: counting the table
-- took more than half of such a list's time at 10,000 rows, and grows with the table.
--
-- Writers spread over 64 slots by their server process, so that concurrent inserts do not all
-- wait on one row; the count is the sum of the slots, read in the statement's snapshot, so it is
-- exactly the rows that snapshot sees. No row for a table: the count is not kept (the service
-- counts the rows itself).
CREATE TABLE "row_counts" (
    "table_name" VARCHAR(63) NOT NULL,
    "slot" SMALLINT NOT NULL,
    "n" BIGINT NOT NULL,

    CONSTRAINT "row_counts_pkey" PRIMARY KEY ("table_name","slot")
);

CREATE FUNCTION "row_counts_track"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta bigint;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM "row_counts" WHERE "table_name" = TG_TABLE_NAME;
    INSERT INTO "row_counts" VALUES (TG_TABLE_NAME, 0, 0);
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    SELECT count(*) INTO delta FROM "inserted";
  ELSE
    SELECT -count(*) INTO delta FROM "deleted";
  END IF;
  IF delta <> 0 THEN
    INSERT INTO "row_counts" AS c VALUES (TG_TABLE_NAME, pg_backend_pid() % 64, delta)
      ON CONFLICT ("table_name", "slot") DO UPDATE SET "n" = c."n" + EXCLUDED."n";
  END IF;
  RETURN NULL;
END
$$;

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['products', 'users', 'orders', 'webhooks'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS "inserted" FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_track"()', t || '_count_inserts', t);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS "deleted" FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_track"()', t || '_count_deletes', t);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION "row_counts_track"()', t || '_count_truncates', t);
    -- The rows there are now; the triggers count from here on (the migration holds its lock).
    EXECUTE format('LOCK TABLE %I IN SHARE MODE', t);
    EXECUTE format('INSERT INTO "row_counts" SELECT %L, 0, count(*) FROM %I', t, t);
  END LOOP;
END
$$;
