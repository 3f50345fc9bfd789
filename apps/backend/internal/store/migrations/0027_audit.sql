-- The audit log (kanban.AuditEntry): one row per state-changing action
-- that took effect, appended in the action's own write transaction, and
-- the entity ids each names (audit_targets, in payload order). Rows are
-- only appended; the retention sweep deletes the old ones. No foreign key
-- to the board: an entry outlives what it names.
CREATE TABLE audit_log (
    id         TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    actor      TEXT NOT NULL,
    actor_kind TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    task_id    TEXT NOT NULL DEFAULT '',
    action     TEXT NOT NULL,
    summary    TEXT NOT NULL,
    via        TEXT NOT NULL,
    remote     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX idx_audit_log_created ON audit_log (created_at, id);
CREATE INDEX idx_audit_log_actor ON audit_log (actor, created_at, id);
CREATE INDEX idx_audit_log_action ON audit_log (action, created_at, id);

CREATE TABLE audit_targets (
    audit_id  TEXT NOT NULL REFERENCES audit_log (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    target_id TEXT NOT NULL,
    PRIMARY KEY (audit_id, position)
);
CREATE INDEX idx_audit_targets_target ON audit_targets (target_id, audit_id);
