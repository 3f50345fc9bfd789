package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// What the PR watcher reads and writes of a pull request: it claims the
// ones due, polls the forge, and records what it saw and decided in one
// transaction over the version it claimed. The claim is the once-only
// mechanism across backends (as ClaimOrphans is for sessions): a claimed
// pull request is not due again until its poll is recorded or the lease
// runs out, and a poll whose row was written meanwhile (by a webhook, an
// operator, another backend whose lease ran out) is refused.

// ErrStale is returned (wrapped, code CONFLICT) by RecordPoll when the
// pull request was written after the poll claimed it.
var ErrStale = &kanban.Error{Code: kanban.CodeConflict, Message: "the pull request changed since the poll claimed it: poll again"}

// ClaimDuePullRequests claims up to limit pull requests due for a poll at
// now — open or draft, of tasks that are not archived, NextPollAt at or
// before now — oldest due first: each gets NextPollAt now+lease and a new
// version, and is returned with it. Each is claimed by one caller only
// (one transaction, serialisable against other backends' claims).
func (s *Store) ClaimDuePullRequests(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]kanban.PullRequest, error) {
	var out []kanban.PullRequest
	err := s.tx(ctx, func(tx txn) error {
		due, err := scanAll(ctx, tx, scanPR, `SELECT `+prColsP+` FROM task_pull_requests p JOIN tasks t ON t.id = p.task_id
			WHERE p.state IN ('open', 'draft') AND p.next_poll_at <= ? AND t.archived_at IS NULL
			ORDER BY p.next_poll_at, p.id LIMIT ?`, fmtTime(now), limit)
		if err != nil {
			return err
		}
		out = out[:0]
		until := now.Add(lease)
		for _, p := range due {
			if _, err := tx.ExecContext(ctx, `UPDATE task_pull_requests SET next_poll_at = ?, version = version + 1 WHERE id = ?`,
				fmtTime(until), p.ID); err != nil {
				return err
			}
			p.Watch.NextPollAt, p.Watch.Version = until.UTC(), p.Watch.Version+1
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim due pull requests: %w", err)
	}
	return out, nil
}

// NextPollDue returns when the next watched pull request is due (nil when
// none is watched).
func (s *Store) NextPollDue(ctx context.Context) (*time.Time, error) {
	var at sql.NullString
	if err := s.stmts.QueryRowContext(ctx, `SELECT MIN(p.next_poll_at) FROM task_pull_requests p JOIN tasks t ON t.id = p.task_id
		WHERE p.state IN ('open', 'draft') AND t.archived_at IS NULL`).Scan(&at); err != nil {
		return nil, fmt.Errorf("next poll due: %w", err)
	}
	return parseTimePtr(at), nil
}

// RecordPoll records a poll of p in one transaction: what the forge said
// of the pull request (state, title, head, checks, review, mergeable), the
// automation's state and the watcher's bookkeeping as p holds them (its
// identity and switches are not written), and the events the poll saw or
// decided — only over the version the poll claimed (p.Watch.Version):
// ErrStale otherwise, and nothing is written. It returns the events
// recorded: one whose key the pull request already has is left out. A
// poll that found the pull request merged moves it through the same
// compare-and-set as MarkPullRequestMerged: its merged event
// (kanban.PREventKeyMerged) is recorded only when this poll moved it.
func (s *Store) RecordPoll(ctx context.Context, p kanban.PullRequest, events []kanban.PREvent) ([]kanban.PREvent, error) {
	if err := checkPR(p); err != nil {
		return nil, err
	}
	if err := checkWatch(p); err != nil {
		return nil, err
	}
	if err := checkEvents(events); err != nil {
		return nil, err
	}
	validators, err := json.Marshal(p.Watch.Validators)
	if err != nil {
		return nil, fmt.Errorf("record poll: %w", err)
	}
	reviewers := nullString("")
	if p.Watch.RequestedReviewers != nil {
		b, err := json.Marshal(p.Watch.RequestedReviewers)
		if err != nil {
			return nil, fmt.Errorf("record poll: %w", err)
		}
		reviewers = nullString(string(b))
	}
	var recorded []kanban.PREvent
	err = s.tx(ctx, func(tx txn) error {
		now := kanban.Now()
		a, w := p.Automation, p.Watch
		res, err := tx.ExecContext(ctx, `UPDATE task_pull_requests SET url = ?, title = ?,
			state = CASE WHEN ? = 'merged' THEN state ELSE ? END, head_sha = ?, checks = ?, review = ?,
			mergeable = ?, auto_fix_rounds = ?, last_fix_at = ?, auto_fix_exhausted_at = ?, last_merge_attempt_at = ?, last_error = ?,
			last_polled_at = ?, next_poll_at = ?, validators = ?, last_review_id = ?, last_comment_id = ?, comments_since = ?,
			last_check_id = ?, checks_reported = ?, merge_sha = ?, requested_reviewers = ?, review_requests = ?, reopens = ?, failures = ?,
			version = version + 1, updated_at = ? WHERE id = ? AND version = ?`,
			p.URL, p.Title, string(p.State), string(p.State), p.HeadSHA, string(p.Checks), string(p.Review), nullBool(p.Mergeable), a.AutoFixRounds,
			nullTime(a.LastFixAt), nullTime(a.AutoFixExhaustedAt), nullTime(a.LastMergeAttemptAt), kanban.Clip(a.LastError, kanban.MaxPRErrorLen),
			nullTime(w.LastPolledAt), fmtTime(w.NextPollAt), string(validators), w.LastReviewID, w.LastCommentID, zeroTime(w.CommentsSince),
			w.LastCheckID, w.ChecksReported, w.MergeSHA, reviewers, w.ReviewRequests, w.Reopens, w.Failures, fmtTime(now), p.ID, w.Version)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			if err == nil {
				err = ErrStale
			}
			return err
		}
		if events, err = pollMerged(ctx, tx, p, events); err != nil {
			return err
		}
		recorded, err = insertPREvents(ctx, tx, p.ID, events, now)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrStale) {
			return nil, ErrStale
		}
		return nil, fmt.Errorf("record poll: %w", err)
	}
	return recorded, nil
}

// AddPREvents records events of a pull request outside a poll (a webhook
// delivery) and, with pollNow, makes it due at once. It returns the
// events recorded (ones whose key the pull request has are left out).
func (s *Store) AddPREvents(ctx context.Context, prID string, events []kanban.PREvent, pollNow bool) ([]kanban.PREvent, error) {
	if err := checkEvents(events); err != nil {
		return nil, err
	}
	var recorded []kanban.PREvent
	err := s.tx(ctx, func(tx txn) error {
		now := kanban.Now()
		set := `version = version + 1`
		args := []any{}
		if pollNow {
			set += `, next_poll_at = ?`
			args = append(args, fmtTime(now))
		}
		res, err := tx.ExecContext(ctx, `UPDATE task_pull_requests SET `+set+` WHERE id = ?`, append(args, prID)...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			if err == nil {
				err = kanban.NotFound("pull request")
			}
			return err
		}
		recorded, err = insertPREvents(ctx, tx, prID, events, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("add pull request events: %w", err)
	}
	return recorded, nil
}

// checkWatch bounds the watcher's bookkeeping.
func checkWatch(p kanban.PullRequest) error {
	w := p.Watch
	if len(w.Validators) > kanban.MaxPRValidators {
		return kanban.FieldError("watch.validators", "at most %d", kanban.MaxPRValidators)
	}
	if len(w.RequestedReviewers) > kanban.MaxRequestedReviewers {
		return kanban.FieldError("watch.requested_reviewers", "at most %d", kanban.MaxRequestedReviewers)
	}
	for _, r := range w.RequestedReviewers {
		if err := kanban.CheckLine("watch.requested_reviewers", r, true, kanban.MaxReviewerLoginLen); err != nil {
			return err
		}
	}
	if err := checkSHA("watch.merge_sha", w.MergeSHA); err != nil {
		return err
	}
	if w.NextPollAt.IsZero() {
		return kanban.FieldError("watch.next_poll_at", "is required")
	}
	return nil
}

func nullTime(t *time.Time) sql.NullString {
	if t == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: fmtTime(*t), Valid: true}
}

// zeroTime stores the zero time as "".
func zeroTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return fmtTime(t)
}

// pollMerged moves a pull request a poll found merged to merged (the
// compare-and-set of MarkPullRequestMerged) and leaves its merged event
// out when the move was made before (through Kandev, or another poll).
func pollMerged(ctx context.Context, tx txn, p kanban.PullRequest, events []kanban.PREvent) ([]kanban.PREvent, error) {
	if p.State != kanban.PRMerged {
		return events, nil
	}
	changed, err := markMerged(ctx, tx, p.ID, "")
	if err != nil || changed {
		return events, err
	}
	out := events[:0:0]
	for _, e := range events {
		if e.Key != kanban.PREventKeyMerged {
			out = append(out, e)
		}
	}
	return out, nil
}
