-- Review and ship: a task's pull (merge) requests with their automation
-- switches and the PR watcher's bookkeeping, the watcher's event journal,
-- a task's task-wide PR automation settings, and operator review comments
-- on a task's diff. Forge ids (reviews, comments, checks) pass 2^31, so
-- they are BIGINT; everything else is portable as in earlier migrations.

CREATE TABLE task_pull_requests (
    id                         TEXT PRIMARY KEY,
    task_id                    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    repository_id              TEXT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    forge                      TEXT NOT NULL CHECK (forge IN ('github', 'gitlab')),
    forge_repo                 TEXT NOT NULL,
    number                     INTEGER NOT NULL CHECK (number > 0),
    url                        TEXT NOT NULL DEFAULT '',
    title                      TEXT NOT NULL DEFAULT '',
    head_branch                TEXT NOT NULL DEFAULT '',
    base_branch                TEXT NOT NULL DEFAULT '',
    state                      TEXT NOT NULL CHECK (state IN ('open', 'draft', 'merged', 'closed')),
    head_sha                   TEXT NOT NULL DEFAULT '',
    checks                     TEXT NOT NULL DEFAULT 'none' CHECK (checks IN ('passing', 'failing', 'pending', 'none')),
    review                     TEXT NOT NULL DEFAULT 'none' CHECK (review IN ('approved', 'changes_requested', 'pending', 'none')),
    mergeable                  INTEGER CHECK (mergeable IN (0, 1)),
    -- The automation switches of this pull request (all off until set).
    auto_fix_enabled           INTEGER NOT NULL DEFAULT 0,
    auto_merge_enabled         INTEGER NOT NULL DEFAULT 0,
    prompt_on_review_requested INTEGER NOT NULL DEFAULT 0,
    prompt_on_merged           INTEGER NOT NULL DEFAULT 0,
    prompt_on_closed           INTEGER NOT NULL DEFAULT 0,
    options_updated_at         TEXT NOT NULL,
    -- What the automation did.
    auto_fix_rounds            INTEGER NOT NULL DEFAULT 0,
    last_fix_at                TEXT,
    auto_fix_exhausted_at      TEXT,
    last_merge_attempt_at      TEXT,
    last_error                 TEXT NOT NULL DEFAULT '',
    -- The watcher's bookkeeping.
    last_polled_at             TEXT,
    next_poll_at               TEXT NOT NULL,
    validators                 TEXT NOT NULL DEFAULT '{}',
    last_review_id             BIGINT NOT NULL DEFAULT 0,
    last_comment_id            BIGINT NOT NULL DEFAULT 0,
    comments_since             TEXT NOT NULL DEFAULT '',
    last_check_id              BIGINT NOT NULL DEFAULT 0,
    checks_reported            TEXT NOT NULL DEFAULT '',
    merge_sha                  TEXT NOT NULL DEFAULT '',
    requested_reviewers        TEXT,
    review_requests            INTEGER NOT NULL DEFAULT 0,
    reopens                    INTEGER NOT NULL DEFAULT 0,
    failures                   INTEGER NOT NULL DEFAULT 0,
    version                    BIGINT NOT NULL DEFAULT 0,
    created_at                 TEXT NOT NULL,
    updated_at                 TEXT NOT NULL,
    UNIQUE (task_id, repository_id, number)
);
CREATE INDEX idx_prs_task ON task_pull_requests (task_id, created_at, id);
-- The watcher finds the pull requests due (open or draft) by this index,
-- and webhook deliveries by forge, repository and number or head.
CREATE INDEX idx_prs_due ON task_pull_requests (next_poll_at, id) WHERE state IN ('open', 'draft');
CREATE INDEX idx_prs_forge_number ON task_pull_requests (forge, forge_repo, number);
CREATE INDEX idx_prs_forge_head ON task_pull_requests (forge, forge_repo, head_sha);

-- The watcher's event journal: what a poll (or a webhook) saw or decided,
-- written in the transaction that records the poll, then delivered once.
-- key is unique per pull request, so the same thing is never recorded
-- (or acted on) twice.
CREATE TABLE pull_request_events (
    id              TEXT PRIMARY KEY,
    pull_request_id TEXT NOT NULL REFERENCES task_pull_requests (id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    event_key       TEXT NOT NULL,
    kind            TEXT NOT NULL,
    payload         TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'delivering', 'delivered', 'failed', 'interrupted')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    claimed_by      TEXT NOT NULL DEFAULT '',
    error           TEXT NOT NULL DEFAULT '',
    due_at          TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (pull_request_id, event_key),
    UNIQUE (pull_request_id, seq)
);
CREATE INDEX idx_pr_events_open ON pull_request_events (state, due_at, pull_request_id) WHERE state IN ('pending', 'delivering');

-- A task's task-wide PR automation settings (the per-pull-request
-- switches are columns of task_pull_requests).
CREATE TABLE task_pr_automation (
    task_id                  TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    auto_fix_prompt_override TEXT,
    review_reviewer_login    TEXT NOT NULL DEFAULT '',
    created_at               TEXT NOT NULL,
    updated_at               TEXT NOT NULL
);

-- An operator's comments on lines of a task's diff, anchored to the
-- commit and the text of the lines they were written on.
CREATE TABLE task_review_comments (
    id            TEXT PRIMARY KEY,
    task_id       TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    repository_id TEXT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    path          TEXT NOT NULL,
    start_line    INTEGER NOT NULL CHECK (start_line > 0),
    end_line      INTEGER NOT NULL CHECK (end_line >= start_line),
    side          TEXT NOT NULL CHECK (side IN ('new', 'old')),
    body          TEXT NOT NULL,
    anchor_commit TEXT NOT NULL,
    anchor_text   TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('open', 'sent', 'resolved', 'outdated')),
    author        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    sent_at       TEXT,
    resolved_at   TEXT
);
CREATE INDEX idx_review_comments_task ON task_review_comments (task_id, created_at, id);
