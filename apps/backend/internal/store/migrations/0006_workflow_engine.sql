-- The workflow engine: step settings it runs, the admission queue of full
-- steps, when a task entered its step (auto-archive), and conversation
-- messages of a task that are not any session's (what automations did).

ALTER TABLE workflow_steps ADD COLUMN auto_advance_requires_signal INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflow_steps ADD COLUMN pull_from_step_id TEXT REFERENCES workflow_steps (id) ON DELETE SET NULL;

ALTER TABLE tasks ADD COLUMN queued_for_step_id TEXT REFERENCES workflow_steps (id) ON DELETE SET NULL;
ALTER TABLE tasks ADD COLUMN queued_at TEXT;
ALTER TABLE tasks ADD COLUMN step_entered_at TEXT NOT NULL DEFAULT '';
UPDATE tasks SET step_entered_at = updated_at;
CREATE INDEX idx_tasks_step_entered ON tasks (workflow_step_id, step_entered_at, id) WHERE archived_at IS NULL;
CREATE INDEX idx_tasks_queued ON tasks (queued_for_step_id, queued_at, id) WHERE queued_for_step_id IS NOT NULL;

CREATE TABLE session_messages_v6 (
    id         TEXT PRIMARY KEY,
    seq        INTEGER NOT NULL,
    session_id TEXT REFERENCES task_sessions (id) ON DELETE CASCADE,
    task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    author     TEXT NOT NULL,
    type       TEXT NOT NULL,
    content    TEXT NOT NULL,
    turn       INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
INSERT INTO session_messages_v6 (id, seq, session_id, task_id, author, type, content, turn, created_at)
    SELECT id, seq, session_id, task_id, author, type, content, turn, created_at FROM session_messages;
DROP TABLE session_messages;
ALTER TABLE session_messages_v6 RENAME TO session_messages;
CREATE UNIQUE INDEX idx_messages_task_seq ON session_messages (task_id, seq);
CREATE INDEX idx_messages_session_seq ON session_messages (session_id, seq);
