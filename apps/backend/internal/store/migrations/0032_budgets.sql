-- Budgets: a limit on what the sessions of a workspace, an agent profile
-- or a task may spend (tokens: input plus output; cost: integer
-- millionths of one currency; 0 = no limit of that kind), and its alert
-- thresholds (percents, comma-separated). revision counts the changes of
-- a budget; budget_alerts holds the alerts fired, one row per revision
-- and threshold, so an alert fires once however many backends record
-- usage.
CREATE TABLE budgets (
    scope             TEXT NOT NULL,
    scope_id          TEXT NOT NULL,
    token_limit       BIGINT NOT NULL DEFAULT 0,
    cost_limit_micros BIGINT NOT NULL DEFAULT 0,
    currency          TEXT NOT NULL DEFAULT '',
    thresholds        TEXT NOT NULL,
    revision          INTEGER NOT NULL DEFAULT 1,
    updated_at        TEXT NOT NULL,
    PRIMARY KEY (scope, scope_id)
);

CREATE TABLE budget_alerts (
    scope      TEXT NOT NULL,
    scope_id   TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    threshold  INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    percent    INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope, scope_id, revision, threshold),
    FOREIGN KEY (scope, scope_id) REFERENCES budgets (scope, scope_id) ON DELETE CASCADE
);
