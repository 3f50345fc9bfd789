package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// An operator's review comments on a task's diff (task_review_comments).
// The store keeps their anchor; whether the anchored lines changed is for
// the caller, which reads the worktree, to tell (MarkReviewCommentsOutdated).

const reviewCommentCols = `id, task_id, repository_id, path, start_line, end_line, side, body, anchor_commit, anchor_text, state,
	author, created_at, updated_at, sent_at, resolved_at`

func scanReviewComment(r rowSource) (*kanban.ReviewComment, error) {
	var c kanban.ReviewComment
	var created, updated string
	var sent, resolved sql.NullString
	if err := r.Scan(&c.ID, &c.TaskID, &c.RepositoryID, &c.Path, &c.StartLine, &c.EndLine, &c.Side, &c.Body, &c.AnchorCommit,
		&c.AnchorText, &c.State, &c.Author, &created, &updated, &sent, &resolved); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt, c.SentAt, c.ResolvedAt = parseTime(created), parseTime(updated), parseTimePtr(sent), parseTimePtr(resolved)
	return &c, nil
}

// checkReviewPath accepts a worktree-relative path: not empty, no leading
// "/", no "." or ".." part, no NUL or other control character. (Whether
// it exists is the worktree's to say.)
func checkReviewPath(p string) error {
	if err := kanban.CheckText("path", p, true, kanban.MaxPathLen); err != nil {
		return err
	}
	if err := kanban.SingleLine("path", p); err != nil {
		return err
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return kanban.FieldError("path", "must be a path inside the worktree (relative, no empty, . or .. parts)")
		}
	}
	return nil
}

func checkReviewComment(c kanban.ReviewComment) error {
	if err := checkReviewPath(c.Path); err != nil {
		return err
	}
	if c.StartLine < 1 || c.StartLine > kanban.MaxDiffLine {
		return kanban.FieldError("start_line", "must be a line number (1 to %d)", kanban.MaxDiffLine)
	}
	if c.EndLine < c.StartLine || c.EndLine > kanban.MaxDiffLine {
		return kanban.FieldError("end_line", "must be a line number from start_line to %d", kanban.MaxDiffLine)
	}
	if c.EndLine-c.StartLine >= kanban.MaxCommentLines {
		return kanban.FieldError("end_line", "a comment spans at most %d lines", kanban.MaxCommentLines)
	}
	if !c.Side.Valid() {
		return kanban.FieldError("side", "must be new or old")
	}
	if strings.TrimSpace(c.Body) == "" {
		return kanban.FieldError("body", "is required")
	}
	if err := kanban.CheckText("body", c.Body, true, kanban.MaxReviewCommentLen); err != nil {
		return err
	}
	if err := checkSHA("anchor_commit", c.AnchorCommit); err != nil || c.AnchorCommit == "" {
		return kanban.FieldError("anchor_commit", "must be a full commit id (40 or 64 lowercase hex digits)")
	}
	if len(c.AnchorText) > kanban.MaxAnchorTextLen {
		return kanban.FieldError("anchor_text", "longer than %d bytes", kanban.MaxAnchorTextLen)
	}
	if !utf8.ValidString(c.AnchorText) {
		return kanban.FieldError("anchor_text", "must be valid UTF-8")
	}
	return kanban.CheckLine("author", c.Author, true, kanban.MaxNameLen)
}

// CreateReviewComment records an open comment on lines of a task's diff in
// one of its repositories. VALIDATION_ERROR when the task is not linked to
// the repository; NOT_FOUND when the task is missing.
func (s *Store) CreateReviewComment(ctx context.Context, c kanban.ReviewComment) (*kanban.ReviewComment, error) {
	if err := checkReviewComment(c); err != nil {
		return nil, err
	}
	now := kanban.Now()
	c.ID, c.State, c.CreatedAt, c.UpdatedAt, c.SentAt, c.ResolvedAt = kanban.NewID(), kanban.CommentOpen, now, now, nil, nil
	err := s.tx(ctx, func(tx txn) error {
		if err := requireTaskRepository(ctx, tx, c.TaskID, c.RepositoryID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO task_review_comments (`+reviewCommentCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`, c.ID, c.TaskID, c.RepositoryID, c.Path, c.StartLine,
			c.EndLine, string(c.Side), c.Body, c.AnchorCommit, c.AnchorText, string(c.State), c.Author, fmtTime(now), fmtTime(now))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create review comment: %w", err)
	}
	return &c, nil
}

// requireTaskRepository: NOT_FOUND without the task, VALIDATION_ERROR
// when it is not linked to the repository.
func requireTaskRepository(ctx context.Context, q queryer, taskID, repositoryID string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM task_repositories WHERE task_id = ? AND repository_id = ?`, taskID, repositoryID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		if err := requireRow(ctx, q, "tasks", "task", taskID); err != nil {
			return err
		}
		return kanban.FieldError("repository_id", "must be a repository linked to the task")
	}
	return err
}

// GetReviewComment returns a review comment (NOT_FOUND when missing).
func (s *Store) GetReviewComment(ctx context.Context, id string) (*kanban.ReviewComment, error) {
	c, err := scanReviewComment(s.stmts.QueryRowContext(ctx, `SELECT `+reviewCommentCols+` FROM task_review_comments WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "review comment")
	}
	return c, nil
}

var reviewCommentListing = listing[kanban.ReviewComment]{what: "list review comments",
	selectFrom: `SELECT ` + reviewCommentCols + ` FROM task_review_comments`, scan: scanReviewComment, cols: []string{"created_at", "id"},
	key: func(c kanban.ReviewComment) []any { return []any{fmtTime(c.CreatedAt), c.ID} }}

// ListReviewComments lists a task's review comments matching f, oldest
// first. NOT_FOUND when the task is missing.
func (s *Store) ListReviewComments(ctx context.Context, f kanban.ReviewCommentFilter, p kanban.Page) (*kanban.List[kanban.ReviewComment], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if f.State != "" && !f.State.Valid() {
		return nil, kanban.FieldError("state", "must be open, sent, resolved or outdated")
	}
	if err := requireRow(ctx, s.stmts, "tasks", "task", f.TaskID); err != nil {
		return nil, err
	}
	where, args := `task_id = ?`, []any{f.TaskID}
	for _, c := range []struct{ col, v string }{{"repository_id", f.RepositoryID}, {"path", f.Path}, {"state", string(f.State)}} {
		if c.v != "" {
			where, args = where+` AND `+c.col+` = ?`, append(args, c.v)
		}
	}
	return reviewCommentListing.page(ctx, s.stmts, p, where, args...)
}

// UpdateReviewComment changes a comment's body (when body is set; only
// while it is open) and its state (when state is set: any state but
// outdated, which MarkReviewCommentsOutdated sets). CONFLICT when an edit
// reaches a comment that is no longer open.
func (s *Store) UpdateReviewComment(ctx context.Context, id string, body *string, state *kanban.ReviewCommentState) (*kanban.ReviewComment, error) {
	if body != nil {
		if strings.TrimSpace(*body) == "" {
			return nil, kanban.FieldError("body", "is required")
		}
		if err := kanban.CheckText("body", *body, true, kanban.MaxReviewCommentLen); err != nil {
			return nil, err
		}
	}
	if state != nil && (!state.Valid() || *state == kanban.CommentOutdated) {
		return nil, kanban.FieldError("state", "must be open, sent or resolved")
	}
	var out *kanban.ReviewComment
	err := s.tx(ctx, func(tx txn) error {
		c, err := scanReviewComment(tx.QueryRowContext(ctx, `SELECT `+reviewCommentCols+` FROM task_review_comments WHERE id = ?`, id))
		if err != nil {
			return notFound(err, "review comment")
		}
		now := kanban.Now()
		if body != nil {
			if c.State != kanban.CommentOpen {
				return kanban.Errorf(kanban.CodeConflict, "only an open review comment can be edited (this one is %s)", c.State)
			}
			c.Body = *body
		}
		if state != nil && *state != c.State {
			c.State = *state
			c.SentAt, c.ResolvedAt = stamp(c.SentAt, c.State == kanban.CommentSent, now), stamp(c.ResolvedAt, c.State == kanban.CommentResolved, now)
		}
		c.UpdatedAt = now
		if _, err := tx.ExecContext(ctx, `UPDATE task_review_comments SET body = ?, state = ?, sent_at = ?, resolved_at = ?, updated_at = ?
			WHERE id = ?`, c.Body, string(c.State), nullTime(c.SentAt), nullTime(c.ResolvedAt), fmtTime(now), id); err != nil {
			return err
		}
		out = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// stamp keeps t, or sets it to now when set is true and t is nil.
func stamp(t *time.Time, set bool, now time.Time) *time.Time {
	if set && t == nil {
		return &now
	}
	return t
}

// MarkReviewCommentsSent marks the open ones of a task's comments ids as
// sent (delivered to its agent with a review) and returns them; the
// others are left as they are.
func (s *Store) MarkReviewCommentsSent(ctx context.Context, taskID string, ids []string) ([]kanban.ReviewComment, error) {
	return s.moveComments(ctx, taskID, ids, []kanban.ReviewCommentState{kanban.CommentOpen}, kanban.CommentSent, "sent_at")
}

// MarkReviewCommentsOutdated marks the open and sent ones of a task's
// comments ids as outdated (the caller found their anchored lines
// changed) and returns them.
func (s *Store) MarkReviewCommentsOutdated(ctx context.Context, taskID string, ids []string) ([]kanban.ReviewComment, error) {
	return s.moveComments(ctx, taskID, ids, []kanban.ReviewCommentState{kanban.CommentOpen, kanban.CommentSent}, kanban.CommentOutdated, "")
}

// moveComments moves a task's comments ids that are in one of from to
// state to (setting the time column stampCol when not ""), and returns
// those it moved, oldest first.
func (s *Store) moveComments(ctx context.Context, taskID string, ids []string, from []kanban.ReviewCommentState, to kanban.ReviewCommentState, stampCol string) ([]kanban.ReviewComment, error) {
	if len(ids) > kanban.MaxLimit {
		return nil, kanban.FieldError("ids", "at most %d", kanban.MaxLimit)
	}
	out := []kanban.ReviewComment{}
	if len(ids) == 0 {
		return out, nil
	}
	err := s.tx(ctx, func(tx txn) error {
		var err error
		out, err = moveCommentsTx(ctx, tx, taskID, ids, from, to, stampCol)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update review comments: %w", err)
	}
	return out, nil
}

// DeleteReviewComment deletes a review comment (NOT_FOUND when missing).
func (s *Store) DeleteReviewComment(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM task_review_comments WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("delete review comment: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = kanban.NotFound("review comment")
			}
			return err
		}
		return nil
	})
}

// moveCommentsTx is moveComments inside tx.
func moveCommentsTx(ctx context.Context, tx txn, taskID string, ids []string, from []kanban.ReviewCommentState, to kanban.ReviewCommentState, stampCol string) ([]kanban.ReviewComment, error) {
	now := fmtTime(kanban.Now())
	idMarks, fromMarks := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", "), strings.TrimSuffix(strings.Repeat("?, ", len(from)), ", ")
	args := []any{taskID}
	for _, id := range ids {
		args = append(args, id)
	}
	for _, st := range from {
		args = append(args, string(st))
	}
	where := `task_id = ? AND id IN (` + idMarks + `) AND state IN (` + fromMarks + `)`
	moved, err := scanAll(ctx, tx, scanReviewComment, `SELECT `+reviewCommentCols+` FROM task_review_comments WHERE `+where+
		` ORDER BY created_at, id`, args...)
	if err != nil || len(moved) == 0 {
		return []kanban.ReviewComment{}, err
	}
	set := `state = ?, updated_at = ?`
	vals := []any{string(to), now}
	if stampCol != "" {
		set += `, ` + stampCol + ` = ?`
		vals = append(vals, now)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE task_review_comments SET `+set+` WHERE `+where, append(vals, args...)...); err != nil {
		return nil, err
	}
	at := parseTime(now)
	for i := range moved {
		moved[i].State, moved[i].UpdatedAt = to, at
		if to == kanban.CommentSent {
			moved[i].SentAt = &at
		}
	}
	return moved, nil
}

// SendReview appends m, a prompt, to session m.SessionID of task taskID
// and marks the task's comments ids sent, in one transaction. CONFLICT,
// and nothing written, unless every comment is still open (one was
// resolved, deleted or sent by another call meanwhile); NOT_FOUND without
// the session; VALIDATION_ERROR when it is another task's.
func (s *Store) SendReview(ctx context.Context, taskID string, ids []string, m kanban.Message) (*kanban.Message, []kanban.ReviewComment, error) {
	if len(ids) == 0 || len(ids) > kanban.MaxLimit {
		return nil, nil, kanban.FieldError("ids", "between 1 and %d", kanban.MaxLimit)
	}
	if err := checkMessage(m); err != nil {
		return nil, nil, err
	}
	var msg *kanban.Message
	var sent []kanban.ReviewComment
	err := s.tx(ctx, func(tx txn) error {
		var sessTask string
		if err := tx.QueryRowContext(ctx, `SELECT task_id FROM task_sessions WHERE id = ?`, m.SessionID).Scan(&sessTask); err != nil {
			return notFound(err, "session")
		}
		if sessTask != taskID {
			return kanban.FieldError("session_id", "is not a session of the task")
		}
		var err error
		sent, err = moveCommentsTx(ctx, tx, taskID, ids, []kanban.ReviewCommentState{kanban.CommentOpen}, kanban.CommentSent, "sent_at")
		if err != nil {
			return err
		}
		if len(sent) != len(ids) {
			return kanban.Errorf(kanban.CodeConflict, "the review changed while it was being sent (a comment was resolved, deleted or sent); send it again")
		}
		m.TaskID = taskID
		msg, err = appendMessage(ctx, tx, m)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("send review: %w", err)
	}
	return msg, sent, nil
}
