-- Office mode: comments on tasks from the operator and agents, and the
-- participants (reviewers, approvers) and quorum of a workflow step.
CREATE TABLE task_comments (
    id               TEXT PRIMARY KEY,
    task_id          TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    author           TEXT NOT NULL,
    agent_profile_id TEXT NOT NULL DEFAULT '',
    body             TEXT NOT NULL,
    created_at       TEXT NOT NULL
);
CREATE INDEX idx_task_comments_task ON task_comments (task_id, created_at, id);

-- A step's approval: its participants and quorum, as JSON
-- (kanban.StepApproval); '' when the step has none.
ALTER TABLE workflow_steps ADD COLUMN approval TEXT NOT NULL DEFAULT '';
