-- Notifications (issue 26): each workspace's inbox, which kinds it
-- records, its outgoing channels (Apprise URLs and signed webhooks, whose
-- URL and secret never leave the server) and the log of what was sent.
CREATE TABLE notifications (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    task_id      TEXT NOT NULL DEFAULT '',
    session_id   TEXT NOT NULL DEFAULT '',
    title        TEXT NOT NULL,
    body         TEXT NOT NULL DEFAULT '',
    dedup_key    TEXT NOT NULL,
    read_at      TEXT,
    created_at   TEXT NOT NULL
);
-- One notification per event, whichever backend saw it first.
CREATE UNIQUE INDEX idx_notifications_dedup ON notifications (workspace_id, dedup_key);
CREATE INDEX idx_notifications_list ON notifications (workspace_id, created_at, id);
CREATE INDEX idx_notifications_unread ON notifications (workspace_id) WHERE read_at IS NULL;

-- A kind a workspace's inbox does not record (no row: it does).
CREATE TABLE notification_settings (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    inbox        INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, kind)
);

CREATE TABLE notification_channels (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    type         TEXT NOT NULL,
    url          TEXT NOT NULL,
    secret       TEXT NOT NULL DEFAULT '',
    events       TEXT NOT NULL,
    enabled      INTEGER NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX idx_notification_channels_ws ON notification_channels (workspace_id, created_at, id);

CREATE TABLE notification_deliveries (
    id              TEXT PRIMARY KEY,
    channel_id      TEXT NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
    workspace_id    TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    notification_id TEXT NOT NULL,
    kind            TEXT NOT NULL,
    state           TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    status          INTEGER NOT NULL DEFAULT 0,
    error           TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX idx_notification_deliveries_ws ON notification_deliveries (workspace_id, created_at, id);
CREATE INDEX idx_notification_deliveries_channel ON notification_deliveries (channel_id, created_at, id);
CREATE INDEX idx_notification_deliveries_queued ON notification_deliveries (state) WHERE state = 'queued';
