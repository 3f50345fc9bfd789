-- SQLite has no event log (events never leave the process): nothing to
-- carry a trace in.
SELECT 1;
