-- Several backends on one database (PostgreSQL): the backends alive now,
-- each with a lease it renews, and which backend runs each managed
-- session's agent. On SQLite one process owns the database; the table
-- stays empty and every session is this process's after a restart.
CREATE TABLE cluster_backends (
    id           TEXT PRIMARY KEY,
    url          TEXT NOT NULL DEFAULT '',
    started_at   TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL
);
CREATE INDEX idx_backends_heartbeat ON cluster_backends (heartbeat_at, id);

-- The backend whose runtime runs the session's agent ('' until one does).
ALTER TABLE task_sessions ADD COLUMN owner_id TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_sessions_owner ON task_sessions (owner_id, managed, state);
