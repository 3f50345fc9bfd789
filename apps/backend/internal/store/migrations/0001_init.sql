-- Kandev schema v1. Portable SQL: TEXT ids generated in Go, timestamps as
-- fixed-width UTC text (kanban time format), booleans as INTEGER 0/1.

CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX idx_workspaces_created ON workspaces (created_at, id);

CREATE TABLE workflows (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    sort_order   INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX idx_workflows_workspace ON workflows (workspace_id, sort_order, id);

CREATE TABLE workflow_steps (
    id                       TEXT PRIMARY KEY,
    workflow_id              TEXT NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    name                     TEXT NOT NULL,
    position                 INTEGER NOT NULL,
    color                    TEXT NOT NULL DEFAULT '',
    prompt                   TEXT NOT NULL DEFAULT '',
    is_start_step            INTEGER NOT NULL DEFAULT 0,
    allow_manual_move        INTEGER NOT NULL DEFAULT 1,
    auto_advance             INTEGER NOT NULL DEFAULT 0,
    wip_limit                INTEGER NOT NULL DEFAULT 0,
    auto_archive_after_hours INTEGER NOT NULL DEFAULT 0,
    events                   TEXT NOT NULL DEFAULT '{}',
    created_at               TEXT NOT NULL,
    updated_at               TEXT NOT NULL,
    UNIQUE (workflow_id, name)
);
CREATE INDEX idx_steps_workflow ON workflow_steps (workflow_id, position, id);

CREATE TABLE tasks (
    id                   TEXT PRIMARY KEY,
    workspace_id         TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    workflow_id          TEXT NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    workflow_step_id     TEXT NOT NULL REFERENCES workflow_steps (id),
    parent_id            TEXT REFERENCES tasks (id) ON DELETE SET NULL,
    title                TEXT NOT NULL,
    description          TEXT NOT NULL DEFAULT '',
    state                TEXT NOT NULL CHECK (state IN ('TODO','IN_PROGRESS','REVIEW','BLOCKED','WAITING_FOR_INPUT','COMPLETED','FAILED','CANCELLED')),
    position             INTEGER NOT NULL,
    external_id          TEXT,
    start_when_unblocked INTEGER NOT NULL DEFAULT 0,
    launch_prompt        TEXT NOT NULL DEFAULT '',
    archived_at          TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_tasks_external ON tasks (workspace_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX idx_tasks_step ON tasks (workflow_step_id, position, id);
CREATE INDEX idx_tasks_workflow_created ON tasks (workflow_id, created_at, id);
CREATE INDEX idx_tasks_workspace_created ON tasks (workspace_id, created_at, id);
CREATE INDEX idx_tasks_parent ON tasks (parent_id, created_at, id);

CREATE TABLE task_dependencies (
    task_id            TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    depends_on_task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    created_at         TEXT NOT NULL,
    PRIMARY KEY (task_id, depends_on_task_id),
    CHECK (task_id <> depends_on_task_id)
);
CREATE INDEX idx_deps_reverse ON task_dependencies (depends_on_task_id, task_id);

CREATE TABLE repositories (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    local_path     TEXT NOT NULL DEFAULT '',
    remote_url     TEXT NOT NULL DEFAULT '',
    default_branch TEXT NOT NULL DEFAULT 'main',
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX idx_repos_workspace ON repositories (workspace_id, created_at, id);

CREATE TABLE task_repositories (
    task_id         TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    repository_id   TEXT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    base_branch     TEXT NOT NULL DEFAULT '',
    checkout_branch TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (task_id, repository_id)
);

CREATE TABLE agents (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE,
    display_name    TEXT NOT NULL,
    supports_mcp    INTEGER NOT NULL DEFAULT 1,
    mcp_config_path TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

CREATE TABLE agent_profiles (
    id            TEXT PRIMARY KEY,
    agent_id      TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    model         TEXT NOT NULL DEFAULT '',
    auto_approve  INTEGER NOT NULL DEFAULT 0,
    user_question INTEGER NOT NULL DEFAULT 1,
    is_default    INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (agent_id, name)
);

CREATE TABLE agent_profile_mcp_configs (
    agent_profile_id TEXT PRIMARY KEY REFERENCES agent_profiles (id) ON DELETE CASCADE,
    enabled          INTEGER NOT NULL DEFAULT 1,
    servers          TEXT NOT NULL DEFAULT '{}',
    updated_at       TEXT NOT NULL
);

CREATE TABLE executors (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    type        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL
);

CREATE TABLE executor_profiles (
    id             TEXT PRIMARY KEY,
    executor_id    TEXT NOT NULL REFERENCES executors (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    mcp_policy     TEXT NOT NULL DEFAULT 'inherit',
    config         TEXT NOT NULL DEFAULT '{}',
    prepare_script TEXT NOT NULL DEFAULT '',
    cleanup_script TEXT NOT NULL DEFAULT '',
    is_default     INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    UNIQUE (executor_id, name)
);

CREATE TABLE task_sessions (
    id                  TEXT PRIMARY KEY,
    task_id             TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    agent_profile_id    TEXT REFERENCES agent_profiles (id) ON DELETE SET NULL,
    executor_profile_id TEXT REFERENCES executor_profiles (id) ON DELETE SET NULL,
    state               TEXT NOT NULL,
    mcp_mode            TEXT NOT NULL,
    capabilities        TEXT NOT NULL DEFAULT '[]',
    token_hash          TEXT NOT NULL UNIQUE,
    mcp_attached        INTEGER NOT NULL DEFAULT 0,
    last_attached_at    TEXT,
    last_detached_at    TEXT,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);
CREATE INDEX idx_sessions_task ON task_sessions (task_id, created_at, id);
CREATE INDEX idx_sessions_profile ON task_sessions (agent_profile_id, state);

CREATE TABLE session_messages (
    id         TEXT PRIMARY KEY,
    seq        INTEGER NOT NULL,
    session_id TEXT NOT NULL REFERENCES task_sessions (id) ON DELETE CASCADE,
    task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    author     TEXT NOT NULL,
    type       TEXT NOT NULL,
    content    TEXT NOT NULL,
    turn       INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_messages_task_seq ON session_messages (task_id, seq);
CREATE INDEX idx_messages_session_seq ON session_messages (session_id, seq);

CREATE TABLE task_plans (
    task_id    TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    title      TEXT NOT NULL DEFAULT '',
    content    TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE task_plan_revisions (
    task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    revision   INTEGER NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    content    TEXT NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (task_id, revision)
);

CREATE TABLE task_documents (
    task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    type       TEXT NOT NULL DEFAULT 'markdown',
    title      TEXT NOT NULL DEFAULT '',
    content    TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (task_id, key)
);

CREATE TABLE task_document_revisions (
    task_id    TEXT NOT NULL,
    key        TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    content    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (task_id, key, revision),
    FOREIGN KEY (task_id, key) REFERENCES task_documents (task_id, key) ON DELETE CASCADE
);

-- Walkthroughs, review findings, rich output, step-completion signals and
-- step decisions: JSON payloads published by sessions about their task.
CREATE TABLE task_artifacts (
    id         TEXT PRIMARY KEY,
    task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    session_id TEXT REFERENCES task_sessions (id) ON DELETE SET NULL,
    kind       TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_artifacts_task_kind ON task_artifacts (task_id, kind, created_at, id);

CREATE TABLE questions (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES task_sessions (id) ON DELETE CASCADE,
    task_id      TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    questions    TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('pending','answered','rejected')),
    answers      TEXT NOT NULL DEFAULT '[]',
    reason       TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    answered_at  TEXT
);
CREATE INDEX idx_questions_state ON questions (state, created_at, id);
CREATE INDEX idx_questions_workspace ON questions (workspace_id, state, created_at, id);
