-- Events that backends sharing this database relay to each other's
-- subscribers. A backend appends its events here and notifies the range
-- of ids on the channel kandev_events (a notification holds ids only, far
-- under its 8000-byte limit); the others read those rows back. Rows are
-- kept for minutes, for backends that reconnect to catch up.
CREATE TABLE cluster_events (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    origin     TEXT NOT NULL,
    topic      TEXT NOT NULL,
    event      TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_cluster_events_created ON cluster_events (created_at);
