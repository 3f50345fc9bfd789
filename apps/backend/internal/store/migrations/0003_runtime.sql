-- The agent runtime: what it records about the sessions it runs, the
-- permissions agents ask for, and the git worktrees of exec-worktree tasks.

ALTER TABLE task_sessions ADD COLUMN managed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_sessions ADD COLUMN workdir TEXT NOT NULL DEFAULT '';
ALTER TABLE task_sessions ADD COLUMN agent_session_id TEXT NOT NULL DEFAULT '';
ALTER TABLE task_sessions ADD COLUMN exit_code INTEGER;
ALTER TABLE task_sessions ADD COLUMN error TEXT NOT NULL DEFAULT '';
ALTER TABLE task_sessions ADD COLUMN started_at TEXT;
ALTER TABLE task_sessions ADD COLUMN ended_at TEXT;
-- The seq of the last prompt message delivered to the agent.
ALTER TABLE task_sessions ADD COLUMN delivered_seq INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_sessions_managed ON task_sessions (managed, state, created_at, id);

CREATE TABLE agent_permissions (
    id           TEXT PRIMARY KEY,
    pending_id   TEXT NOT NULL,
    session_id   TEXT NOT NULL REFERENCES task_sessions (id) ON DELETE CASCADE,
    task_id      TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    title        TEXT NOT NULL,
    kind         TEXT NOT NULL DEFAULT '',
    options      TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('pending','resolved','cancelled','expired')),
    option_id    TEXT NOT NULL DEFAULT '',
    resolved_by  TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    resolved_at  TEXT
);
CREATE INDEX idx_permissions_task ON agent_permissions (task_id, state, created_at, id);
CREATE INDEX idx_permissions_workspace ON agent_permissions (workspace_id, state, created_at, id);
CREATE INDEX idx_permissions_session ON agent_permissions (session_id, state);

CREATE TABLE task_worktrees (
    task_id       TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    repository_id TEXT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    path          TEXT NOT NULL,
    branch        TEXT NOT NULL,
    created_at    TEXT NOT NULL
);
