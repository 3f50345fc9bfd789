-- Nothing on SQLite: one process owns the database, so events never leave
-- it (see 0009_events.postgres.sql).
SELECT 1;
