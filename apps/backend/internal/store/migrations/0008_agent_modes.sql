-- How a task's agents work, as step automations set it: plan mode
-- (enable_plan_mode / disable_plan_mode), the ACP session mode asked for
-- (set_session_mode), and the live session whose next turn starts in a
-- fresh ACP session (reset_agent_context). One row per task, written on
-- first use; no row is the default mode.
CREATE TABLE task_agent_modes (
    task_id          TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    plan_mode        INTEGER NOT NULL DEFAULT 0,
    session_mode     TEXT NOT NULL DEFAULT '',
    reset_session_id TEXT NOT NULL DEFAULT '',
    updated_at       TEXT NOT NULL
);
