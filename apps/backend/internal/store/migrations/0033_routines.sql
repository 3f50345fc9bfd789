-- Routines: schedules that create a task or wake one. next_run_at is when
-- a routine next falls due (UTC, the store's time format, so it orders as
-- text); a scheduler claims a run by moving it (compare-and-set), so a
-- run is claimed once however many backends tick. routine_runs keeps the
-- last runs of each routine, one row per schedule time.
CREATE TABLE routines (
    id                  TEXT PRIMARY KEY,
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name                TEXT NOT NULL,
    schedule            TEXT NOT NULL,
    time_zone           TEXT NOT NULL,
    target              TEXT NOT NULL,
    title               TEXT NOT NULL DEFAULT '',
    prompt              TEXT NOT NULL DEFAULT '',
    workflow_id         TEXT NOT NULL DEFAULT '',
    workflow_step_id    TEXT NOT NULL DEFAULT '',
    agent_profile_id    TEXT NOT NULL DEFAULT '',
    executor_profile_id TEXT NOT NULL DEFAULT '',
    start_agent         INTEGER NOT NULL DEFAULT 1,
    task_id             TEXT NOT NULL DEFAULT '',
    missed              TEXT NOT NULL,
    enabled             INTEGER NOT NULL DEFAULT 1,
    next_run_at         TEXT NOT NULL,
    last_run_at         TEXT,
    last_task_id        TEXT NOT NULL DEFAULT '',
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);

CREATE INDEX routines_due ON routines (enabled, next_run_at);
CREATE INDEX routines_workspace ON routines (workspace_id, created_at, id);

CREATE TABLE routine_runs (
    routine_id    TEXT NOT NULL REFERENCES routines (id) ON DELETE CASCADE,
    scheduled_for TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    task_id       TEXT NOT NULL DEFAULT '',
    detail        TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (routine_id, scheduled_for)
);
