-- The agent and executor profiles named when a task was created with
-- start_when_unblocked: its session starts with them once unblocked.
CREATE TABLE task_deferred_starts (
    task_id             TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    agent_profile_id    TEXT REFERENCES agent_profiles (id) ON DELETE SET NULL,
    executor_profile_id TEXT REFERENCES executor_profiles (id) ON DELETE SET NULL
);
