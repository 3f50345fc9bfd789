-- The board shows each card's newest session: list a workspace's sessions
-- newest first without scanning every session.
CREATE INDEX idx_sessions_workspace ON task_sessions (workspace_id, created_at, id);
