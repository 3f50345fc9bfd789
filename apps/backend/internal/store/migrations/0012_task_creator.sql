-- The task whose session created a task (NULL: the operator did, or the
-- creating task was deleted since). A task session's writes reach its own
-- task, its descendants, the tasks it created and their descendants
-- (--session-scope tree).
ALTER TABLE tasks ADD COLUMN created_by_task_id TEXT REFERENCES tasks (id) ON DELETE SET NULL;
CREATE INDEX idx_tasks_created_by ON tasks (created_by_task_id);
