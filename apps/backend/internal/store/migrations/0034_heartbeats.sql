-- Heartbeats: a step's heartbeat_minutes fires on_heartbeat for each task
-- on it every that many minutes. tasks.heartbeat_at is when the task's
-- last heartbeat on its current step fired (cleared by a move to another
-- step); a sweep claims a heartbeat by moving it (compare-and-set), so it
-- fires once however many backends sweep.
ALTER TABLE workflow_steps ADD COLUMN heartbeat_minutes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN heartbeat_at TEXT;
