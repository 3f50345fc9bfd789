-- The agent and executor profiles named when a task was created are kept
-- for every later start of an agent on it (a start_agent automation, a
-- pull into a step, start_when_unblocked, a spawn that names none), not
-- only for start_when_unblocked: the table holds them for every task
-- created with a profile, under a name that says so.
ALTER TABLE task_deferred_starts RENAME TO task_start_profiles;

-- The conversation message that tells of a permission request ("Waiting
-- for an operator: …"), rewritten with the request's outcome when it is
-- answered, expires or is cancelled ('' for requests made before).
ALTER TABLE agent_permissions ADD COLUMN message_id TEXT NOT NULL DEFAULT '';

-- A task arriving on a step is pulled by the steps that pull from it
-- (pull_from_step_id): the engine finds them by this index.
CREATE INDEX idx_steps_pull_from ON workflow_steps (pull_from_step_id) WHERE pull_from_step_id IS NOT NULL;
