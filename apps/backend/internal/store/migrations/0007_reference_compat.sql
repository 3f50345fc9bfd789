-- What agents and workflows written for the reference product need:
-- session names, two step settings, autopilot tasks and their workspace
-- mode, and questions with shared context, some asked of a parent task.

ALTER TABLE task_sessions ADD COLUMN name TEXT NOT NULL DEFAULT '';

ALTER TABLE workflow_steps ADD COLUMN cancel_triggers_turn_complete INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflow_steps ADD COLUMN show_in_command_panel INTEGER NOT NULL DEFAULT 0;
-- The agent profile a step's (or, by default, its workflow's) automations
-- start agents with; a workflow's prompt, given to its agents first.
ALTER TABLE workflow_steps ADD COLUMN agent_profile_id TEXT REFERENCES agent_profiles(id) ON DELETE SET NULL;
ALTER TABLE workflows ADD COLUMN prompt TEXT NOT NULL DEFAULT '';
ALTER TABLE workflows ADD COLUMN agent_profile_id TEXT REFERENCES agent_profiles(id) ON DELETE SET NULL;

ALTER TABLE tasks ADD COLUMN autopilot INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN workspace_mode TEXT NOT NULL DEFAULT '';

ALTER TABLE questions ADD COLUMN context TEXT NOT NULL DEFAULT '';
-- kind: 'user' (ask_user_question, answered by an operator) or 'parent'
-- (ask_parent_question, answered by the parent task's agent).
ALTER TABLE questions ADD COLUMN kind TEXT NOT NULL DEFAULT 'user';
-- reply: the parent task's answer to a parent question.
ALTER TABLE questions ADD COLUMN reply TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_questions_kind ON questions (kind, state, created_at, id);
