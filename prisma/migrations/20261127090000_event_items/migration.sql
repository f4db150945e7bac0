-- An event keeps the row its change wrote, and is rendered when it is read: the change and its
-- event can then be one statement, the event made from the row the change returns (issue 24).
-- Events written before keep their rendered representation in `data`.
ALTER TABLE "events" ADD COLUMN "item" JSONB;
ALTER TABLE "events" ALTER COLUMN "data" SET DEFAULT '{}';
