package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// A task's pull requests (task_pull_requests): what the forge last said
// of each, its automation switches and state, and the PR watcher's
// bookkeeping. Every write of a row moves its version, so a poll, which
// claimed the row at one version, records its result only if nothing
// wrote the row meanwhile (RecordPoll).

const prCols = `id, task_id, repository_id, forge, forge_repo, number, url, title, head_branch, base_branch, state, head_sha,
	checks, review, mergeable, auto_fix_enabled, auto_merge_enabled, prompt_on_review_requested, prompt_on_merged,
	prompt_on_closed, options_updated_at, auto_fix_rounds, last_fix_at, auto_fix_exhausted_at, last_merge_attempt_at,
	last_error, last_polled_at, next_poll_at, validators, last_review_id, last_comment_id, comments_since, last_check_id,
	checks_reported, merge_sha, requested_reviewers, review_requests, reopens, failures, version, created_at, updated_at`

// prRow is a pull request with the time its switches last changed.
type prRow struct {
	kanban.PullRequest
	optionsUpdated time.Time
}

func scanPRRow(r rowSource) (*prRow, error) {
	var row prRow
	p := &row.PullRequest
	var mergeable sql.NullInt64
	var optsAt, created, updated, nextPoll, since, validators string
	var lastFix, exhausted, lastMerge, polled, reviewers sql.NullString
	o, a, w := &p.Options, &p.Automation, &p.Watch
	if err := r.Scan(&p.ID, &p.TaskID, &p.RepositoryID, &p.Forge, &p.ForgeRepo, &p.Number, &p.URL, &p.Title, &p.HeadBranch,
		&p.BaseBranch, &p.State, &p.HeadSHA, &p.Checks, &p.Review, &mergeable, &o.AutoFixEnabled, &o.AutoMergeEnabled,
		&o.PromptOnReviewRequested, &o.PromptOnMerged, &o.PromptOnClosed, &optsAt, &a.AutoFixRounds, &lastFix, &exhausted,
		&lastMerge, &a.LastError, &polled, &nextPoll, &validators, &w.LastReviewID, &w.LastCommentID, &since, &w.LastCheckID,
		&w.ChecksReported, &w.MergeSHA, &reviewers, &w.ReviewRequests, &w.Reopens, &w.Failures, &w.Version, &created, &updated); err != nil {
		return nil, err
	}
	if mergeable.Valid {
		p.Mergeable = new(mergeable.Int64 == 1)
	}
	row.optionsUpdated = parseTime(optsAt)
	a.LastFixAt, a.AutoFixExhaustedAt, a.LastMergeAttemptAt = parseTimePtr(lastFix), parseTimePtr(exhausted), parseTimePtr(lastMerge)
	w.LastPolledAt, w.NextPollAt = parseTimePtr(polled), parseTime(nextPoll)
	if since != "" {
		w.CommentsSince = parseTime(since)
	}
	if err := json.Unmarshal([]byte(validators), &w.Validators); err != nil {
		return nil, fmt.Errorf("pull request %s: validators: %w", p.ID, err)
	}
	if reviewers.Valid {
		if err := json.Unmarshal([]byte(reviewers.String), &w.RequestedReviewers); err != nil {
			return nil, fmt.Errorf("pull request %s: requested reviewers: %w", p.ID, err)
		}
		if w.RequestedReviewers == nil {
			w.RequestedReviewers = []string{}
		}
	}
	p.CreatedAt, p.UpdatedAt = parseTime(created), parseTime(updated)
	return &row, nil
}

func scanPR(r rowSource) (*kanban.PullRequest, error) {
	row, err := scanPRRow(r)
	if err != nil {
		return nil, err
	}
	return &row.PullRequest, nil
}

// checkPR validates what a pull request's record holds of the forge.
func checkPR(p kanban.PullRequest) error {
	switch {
	case !p.Forge.Valid():
		return kanban.FieldError("forge", "must be github or gitlab")
	case !p.State.Valid():
		return kanban.FieldError("state", "must be open, draft, merged or closed")
	case !p.Checks.Valid():
		return kanban.FieldError("checks", "must be passing, failing, pending or none")
	case !p.Review.Valid():
		return kanban.FieldError("review", "must be approved, changes_requested, pending or none")
	}
	if p.Number < 1 || p.Number > kanban.MaxPRNumber {
		return kanban.FieldError("number", "must be a pull request number (1 to %d)", kanban.MaxPRNumber)
	}
	if err := checkForgeRepo(p.ForgeRepo); err != nil {
		return err
	}
	if err := kanban.CheckText("url", p.URL, false, kanban.MaxURLLen); err != nil {
		return err
	}
	if err := kanban.CheckLine("title", p.Title, false, kanban.MaxPRTitleLen); err != nil {
		return err
	}
	for _, b := range []struct{ field, v string }{{"head_branch", p.HeadBranch}, {"base_branch", p.BaseBranch}} {
		if err := kanban.CheckText(b.field, b.v, false, kanban.MaxBranchLen); err != nil {
			return err
		}
		if err := kanban.CheckBranch(b.field, b.v); err != nil {
			return err
		}
	}
	return checkSHA("head_sha", p.HeadSHA)
}

// checkForgeRepo accepts "owner/name" (and GitLab's "group/sub/name"):
// letters, digits, - _ . in parts joined by single slashes.
func checkForgeRepo(s string) error {
	bad := kanban.FieldError("forge_repo", "must be the forge's owner/name of the repository")
	if err := kanban.CheckText("forge_repo", s, true, kanban.MaxForgeRepoLen); err != nil {
		return err
	}
	parts := strings.Split(s, "/")
	if len(parts) < 2 {
		return bad
	}
	for _, part := range parts {
		if part == "" || part == "." || part == ".." || strings.Trim(part, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
			return bad
		}
	}
	return nil
}

// checkSHA accepts "" or a full commit id (40 or 64 lowercase hex digits).
func checkSHA(field, s string) error {
	if s != "" && (len(s) != 40 && len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "") {
		return kanban.FieldError(field, "must be a full commit id (40 or 64 lowercase hex digits)")
	}
	return nil
}

// LinkPullRequest records a pull request opened for a task in one of the
// task's repositories (Options, Automation and Watch are ignored: a new
// link starts with every switch off and is due for a poll now). Linking
// the same number again updates what the forge said of it. VALIDATION_ERROR
// when the task is not linked to the repository.
func (s *Store) LinkPullRequest(ctx context.Context, p kanban.PullRequest) (*kanban.PullRequest, error) {
	if p.Checks == "" {
		p.Checks = kanban.ChecksNone
	}
	if p.Review == "" {
		p.Review = kanban.ReviewNone
	}
	if err := checkPR(p); err != nil {
		return nil, err
	}
	var out *kanban.PullRequest
	err := s.tx(ctx, func(tx txn) error {
		if err := requireTaskRepository(ctx, tx, p.TaskID, p.RepositoryID); err != nil {
			return err
		}
		now := fmtTime(kanban.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_pull_requests (id, task_id, repository_id, forge, forge_repo, number, url,
			title, head_branch, base_branch, state, head_sha, checks, review, mergeable, options_updated_at, next_poll_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (task_id, repository_id, number) DO UPDATE SET forge = excluded.forge, forge_repo = excluded.forge_repo,
			url = excluded.url, title = excluded.title, head_branch = excluded.head_branch, base_branch = excluded.base_branch,
			state = excluded.state, head_sha = excluded.head_sha, checks = excluded.checks, review = excluded.review,
			mergeable = excluded.mergeable, next_poll_at = excluded.next_poll_at, updated_at = excluded.updated_at,
			version = task_pull_requests.version + 1`,
			kanban.NewID(), p.TaskID, p.RepositoryID, string(p.Forge), p.ForgeRepo, p.Number, p.URL, p.Title, p.HeadBranch,
			p.BaseBranch, string(p.State), p.HeadSHA, string(p.Checks), string(p.Review), nullBool(p.Mergeable), now, now, now, now); err != nil {
			return fmt.Errorf("link pull request: %w", err)
		}
		var err error
		out, err = scanPR(tx.QueryRowContext(ctx, `SELECT `+prCols+` FROM task_pull_requests
			WHERE task_id = ? AND repository_id = ? AND number = ?`, p.TaskID, p.RepositoryID, p.Number))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func nullBool(b *bool) sql.NullInt64 {
	if b == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(boolInt(*b)), Valid: true}
}

// GetPullRequest returns a pull request record (NOT_FOUND when missing).
func (s *Store) GetPullRequest(ctx context.Context, id string) (*kanban.PullRequest, error) {
	return getPR(ctx, s.stmts, id)
}

func getPR(ctx context.Context, q queryer, id string) (*kanban.PullRequest, error) {
	p, err := scanPR(q.QueryRowContext(ctx, `SELECT `+prCols+` FROM task_pull_requests WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "pull request")
	}
	return p, nil
}

// FindPullRequest returns a task's pull request by repository and number
// (NOT_FOUND when the task has none such).
func (s *Store) FindPullRequest(ctx context.Context, taskID, repositoryID string, number int) (*kanban.PullRequest, error) {
	p, err := scanPR(s.stmts.QueryRowContext(ctx, `SELECT `+prCols+` FROM task_pull_requests
		WHERE task_id = ? AND repository_id = ? AND number = ?`, taskID, repositoryID, number))
	if err != nil {
		return nil, notFound(err, "pull request")
	}
	return p, nil
}

var prListing = listing[kanban.PullRequest]{what: "list pull requests",
	selectFrom: `SELECT ` + prCols + ` FROM task_pull_requests`, scan: scanPR, cols: []string{"created_at", "id"},
	key: func(p kanban.PullRequest) []any { return []any{fmtTime(p.CreatedAt), p.ID} }}

// ListTaskPullRequests lists a task's pull requests in the order they were
// linked. NOT_FOUND when the task is missing.
func (s *Store) ListTaskPullRequests(ctx context.Context, taskID string, p kanban.Page) (*kanban.List[kanban.PullRequest], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "tasks", "task", taskID); err != nil {
		return nil, err
	}
	return prListing.page(ctx, s.stmts, p, `task_id = ?`, taskID)
}

// WatchedPullRequests returns the open and draft pull requests of tasks
// that are not archived that a forge delivery names: on forge, in
// forgeRepo, with one of numbers or with head headSHA (when not empty).
// At most kanban.MaxLimit.
func (s *Store) WatchedPullRequests(ctx context.Context, forge kanban.ForgeKind, forgeRepo string, numbers []int, headSHA string) ([]kanban.PullRequest, error) {
	conds, args := []string{}, []any{string(forge), forgeRepo}
	for _, n := range numbers[:min(len(numbers), kanban.MaxLimit)] {
		conds, args = append(conds, "p.number = ?"), append(args, n)
	}
	if headSHA != "" {
		conds, args = append(conds, "p.head_sha = ?"), append(args, headSHA)
	}
	if len(conds) == 0 {
		return []kanban.PullRequest{}, nil
	}
	out, err := scanAll(ctx, s.stmts, scanPR, `SELECT `+prColsP+` FROM task_pull_requests p JOIN tasks t ON t.id = p.task_id
		WHERE p.forge = ? AND p.forge_repo = ? AND (`+strings.Join(conds, " OR ")+`) AND p.state IN ('open', 'draft')
		AND t.archived_at IS NULL ORDER BY p.created_at, p.id LIMIT ?`, append(args, kanban.MaxLimit)...)
	if err != nil {
		return nil, fmt.Errorf("watched pull requests: %w", err)
	}
	if out == nil {
		out = []kanban.PullRequest{}
	}
	return out, nil
}

// prColsP is prCols qualified by the alias p.
var prColsP = "p." + strings.Join(strings.Split(strings.Join(strings.Fields(prCols), " "), ", "), ", p.")
