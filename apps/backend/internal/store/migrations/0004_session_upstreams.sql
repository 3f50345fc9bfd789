-- What each session's MCP server last reported about its proxied upstream
-- MCP servers: one row per server, and the tools it refused to serve.
CREATE TABLE session_upstreams (
    session_id    TEXT NOT NULL REFERENCES task_sessions (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    type          TEXT NOT NULL,
    state         TEXT NOT NULL,
    detail        TEXT NOT NULL DEFAULT '',
    tools_served  INTEGER NOT NULL DEFAULT 0,
    tools_refused INTEGER NOT NULL DEFAULT 0,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (session_id, name)
);

CREATE TABLE session_upstream_refusals (
    session_id TEXT NOT NULL,
    server     TEXT NOT NULL,
    position   INTEGER NOT NULL,
    tool       TEXT NOT NULL,
    rule       TEXT NOT NULL,
    reason     TEXT NOT NULL,
    PRIMARY KEY (session_id, server, position),
    FOREIGN KEY (session_id, server) REFERENCES session_upstreams (session_id, name) ON DELETE CASCADE
);
