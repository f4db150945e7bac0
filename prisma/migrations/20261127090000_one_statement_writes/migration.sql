-- Writes in one statement (issue 24): the change and its event, committed on their own.
--
-- An event keeps the row its change wrote and is rendered when it is read: the event is then made
-- in SQL from the row the change returns. Events written before keep their representation in
-- `data`, which now holds only what an event adds to its item (a move's `from` and `to`).
ALTER TABLE "events" ADD COLUMN "item" JSONB;
ALTER TABLE "events" ALTER COLUMN "data" SET DEFAULT '{}';

-- A request's time limit, kept by a write with no transaction around it to check it before its
-- COMMIT: true while the statement's transaction has run for less than `remaining_ms`, else the
-- statement fails as one cancelled at its time limit (57014), so that nothing commits after the
-- client was answered 503. Measured from the transaction's start, which comes before any wait for
-- a lock (statement_timestamp() restarts with each protocol message, after the wait), on the
-- database's own clock: the service's and the database's clocks need not agree.
CREATE FUNCTION "in_time"("remaining_ms" DOUBLE PRECISION) RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF clock_timestamp() > transaction_timestamp() + "remaining_ms" * interval '1 millisecond' THEN
    RAISE EXCEPTION 'the request''s time ran out before its write could commit' USING ERRCODE = '57014';
  END IF;
  RETURN true;
END
$$;

-- The item a create made, recorded with it (in its statement or its transaction): a retry with
-- the same Idempotency-Key after a crash between the write and its answer finds it written.
ALTER TABLE "idempotency_keys" ADD COLUMN "item_id" UUID;
