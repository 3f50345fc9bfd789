-- Nothing on SQLite: one process owns the database, so events never leave
-- it (see 0010_events.postgres.sql).
SELECT 1;
