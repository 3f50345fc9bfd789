-- What agents report they consumed (ACP usage): one totals row per
-- session that recorded usage, and its newest turns (at most
-- kanban.MaxUsageTurnRows rows per session; older turns are deleted, the
-- totals keep counting them). Costs are integer millionths of their
-- currency. agent_session_id and agent_cost_micros are the ACP session
-- and its cumulative cost as last reported, from which each turn's cost
-- is the difference.
CREATE TABLE session_usage (
    session_id          TEXT PRIMARY KEY REFERENCES task_sessions (id) ON DELETE CASCADE,
    task_id             TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    turns               INTEGER NOT NULL DEFAULT 0,
    input_tokens        BIGINT NOT NULL DEFAULT 0,
    output_tokens       BIGINT NOT NULL DEFAULT 0,
    cached_read_tokens  BIGINT NOT NULL DEFAULT 0,
    cached_write_tokens BIGINT NOT NULL DEFAULT 0,
    thought_tokens      BIGINT NOT NULL DEFAULT 0,
    cost_micros         BIGINT NOT NULL DEFAULT 0,
    currency            TEXT NOT NULL DEFAULT '',
    context_used        BIGINT NOT NULL DEFAULT 0,
    context_size        BIGINT NOT NULL DEFAULT 0,
    agent_session_id    TEXT NOT NULL DEFAULT '',
    agent_cost_micros   BIGINT NOT NULL DEFAULT 0,
    updated_at          TEXT NOT NULL
);
CREATE INDEX idx_session_usage_task ON session_usage (task_id);
CREATE INDEX idx_session_usage_workspace ON session_usage (workspace_id);

CREATE TABLE session_usage_turns (
    session_id          TEXT NOT NULL REFERENCES session_usage (session_id) ON DELETE CASCADE,
    seq                 INTEGER NOT NULL,
    input_tokens        BIGINT NOT NULL,
    output_tokens       BIGINT NOT NULL,
    cached_read_tokens  BIGINT NOT NULL,
    cached_write_tokens BIGINT NOT NULL,
    thought_tokens      BIGINT NOT NULL,
    cost_micros         BIGINT NOT NULL,
    currency            TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
