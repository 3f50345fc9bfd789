-- A task gets one git worktree per repository it works in (a task with
-- several linked repositories works in a task directory holding one
-- worktree per repository): task_worktrees is keyed by (task, repository)
-- instead of by task. Existing rows keep their paths.
CREATE TABLE task_worktrees_v2 (
    task_id       TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    repository_id TEXT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    path          TEXT NOT NULL,
    branch        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (task_id, repository_id)
);
INSERT INTO task_worktrees_v2 (task_id, repository_id, path, branch, created_at)
    SELECT task_id, repository_id, path, branch, created_at FROM task_worktrees;
DROP TABLE task_worktrees;
ALTER TABLE task_worktrees_v2 RENAME TO task_worktrees;
