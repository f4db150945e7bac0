-- Run once, when the database volume is created. Behind PgBouncer in transaction mode the service
-- cannot set statement_timeout when it connects (STATEMENT_TIMEOUT_MS): the role carries it.
ALTER ROLE resourceful SET statement_timeout = '5s';
