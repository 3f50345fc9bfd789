package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// maxRunErrorLen bounds a failed session's error text, in characters.
const maxRunErrorLen = 4000

// UpdateRun applies u to a managed session and moves its task to the state
// the session states imply, in one transaction. CONFLICT for a session that
// has ended or is not managed.
func (s *Store) UpdateRun(ctx context.Context, id string, u kanban.RunUpdate) (*kanban.Session, *kanban.Task, error) {
	if u.State != "" && (!u.State.Valid() || u.State == kanban.SessionCreated) {
		return nil, nil, kanban.FieldError("state", "must be a state of a managed session")
	}
	if u.Error != nil && len(*u.Error) > maxRunErrorLen {
		e := (*u.Error)[:maxRunErrorLen]
		u.Error = &e
	}
	var (
		sess *kanban.Session
		task *kanban.Task
	)
	err := s.tx(ctx, func(tx txn) error {
		cur, err := getSession(ctx, tx, id)
		if err != nil {
			return err
		}
		if !cur.Managed || cur.State.Ended() {
			return kanban.Errorf(kanban.CodeConflict, "the session has ended")
		}
		if err := updateRun(ctx, tx, cur, u); err != nil {
			return err
		}
		if sess, err = getSession(ctx, tx, id); err != nil {
			return err
		}
		if u.State != "" {
			task, err = syncTaskState(ctx, tx, sess.TaskID, u.State)
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return sess, task, nil
}

// updateRun writes u's set fields to session cur.
func updateRun(ctx context.Context, tx txn, cur *kanban.Session, u kanban.RunUpdate) error {
	now := fmtTime(kanban.Now())
	sets, args := []string{"updated_at = ?"}, []any{now}
	add := func(set string, v any) { sets, args = append(sets, set), append(args, v) }
	if u.State != "" {
		add("state = ?", string(u.State))
		if u.State == kanban.SessionStarting && cur.StartedAt == nil {
			add("started_at = ?", now)
		}
		if u.State.Ended() {
			add("ended_at = ?", now)
		}
	}
	if u.Workdir != nil {
		add("workdir = ?", *u.Workdir)
	}
	if u.AgentSessionID != nil {
		add("agent_session_id = ?", *u.AgentSessionID)
	}
	if u.ExitCode != nil {
		add("exit_code = ?", *u.ExitCode)
	}
	if u.Error != nil {
		add("error = ?", *u.Error)
	}
	args = append(args, cur.ID)
	if _, err := tx.ExecContext(ctx, `UPDATE task_sessions SET `+strings.Join(sets, ", ")+` WHERE id = ?`, args...); err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	return nil
}

// syncTaskState moves task taskID to the state its managed sessions imply
// now that one of them moved to changed; it returns the task when its
// state changed, else nil.
func syncTaskState(ctx context.Context, tx txn, taskID string, changed kanban.SessionState) (*kanban.Task, error) {
	t, err := getTask(ctx, tx, taskID)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT state FROM task_sessions WHERE task_id = ? AND managed = 1
		AND state NOT IN (?, ?, ?)`, taskID, string(kanban.SessionCompleted), string(kanban.SessionFailed),
		string(kanban.SessionCancelled))
	if err != nil {
		return nil, fmt.Errorf("sync task state: %w", err)
	}
	var live []kanban.SessionState
	for rows.Next() {
		var st string
		if err := rows.Scan(&st); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("sync task state: %w", err)
		}
		live = append(live, kanban.SessionState(st))
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("sync task state: %w", err)
	}
	next, ok := kanban.TaskStateForSessions(t.State, changed, live)
	if !ok {
		return nil, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET state = ?, updated_at = ? WHERE id = ?`,
		string(next), fmtTime(kanban.Now()), taskID); err != nil {
		return nil, fmt.Errorf("sync task state: %w", err)
	}
	return getTask(ctx, tx, taskID)
}

// LiveManagedSessions lists managed sessions that have not ended, oldest first.
func (s *Store) LiveManagedSessions(ctx context.Context, p kanban.Page) (*kanban.List[kanban.Session], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	return liveManagedListing.page(ctx, s.stmts, p, `managed = 1 AND state NOT IN (?, ?, ?)`,
		string(kanban.SessionCompleted), string(kanban.SessionFailed), string(kanban.SessionCancelled))
}

var liveManagedListing = listing[kanban.Session]{what: "list live sessions",
	selectFrom: `SELECT ` + sessionColumns + ` FROM task_sessions`, scan: scanSession,
	cols: []string{"created_at", "id"},
	key:  func(x kanban.Session) []any { return []any{fmtTime(x.CreatedAt), x.ID} }}

// UpdateMessage replaces a message's content (VALIDATION_ERROR when too
// long, NOT_FOUND when missing).
func (s *Store) UpdateMessage(ctx context.Context, id, content string) (*kanban.Message, error) {
	if err := kanban.CheckText("content", content, false, kanban.MaxContentLen); err != nil {
		return nil, err
	}
	var out *kanban.Message
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE session_messages SET content = ? WHERE id = ?`, content, id)
		if err := affectedOne(res, err, "message"); err != nil {
			return err
		}
		out, err = getMessage(ctx, tx, id)
		return err
	})
	return out, err
}

func getMessage(ctx context.Context, q queryer, id string) (*kanban.Message, error) {
	m, err := scanMessage(q.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM session_messages WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "message")
	}
	return m, nil
}

// scanMessage scans the messageColumns of a row.
func scanMessage(r rowSource) (*kanban.Message, error) {
	var (
		m         kanban.Message
		seq       int64
		session   sql.NullString
		createdAt string
	)
	if err := r.Scan(&m.ID, &seq, &session, &m.TaskID, &m.Author, &m.Type, &m.Content, &m.Turn, &createdAt); err != nil {
		return nil, err
	}
	m.SessionID, m.CreatedAt = session.String, parseTime(createdAt)
	return &m, nil
}

// PendingPrompts returns the session's oldest undelivered prompt messages.
func (s *Store) PendingPrompts(ctx context.Context, sessionID string, limit int) ([]kanban.Message, error) {
	out, err := scanAll(ctx, s.stmts, scanMessage, `SELECT m.id, m.seq, m.session_id, m.task_id, m.author, m.type, m.content,
		m.turn, m.created_at FROM session_messages m JOIN task_sessions s ON s.id = m.session_id
		WHERE m.session_id = ? AND m.type = 'prompt' AND m.seq > s.delivered_seq ORDER BY m.seq LIMIT ?`, sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("pending prompts: %w", err)
	}
	return out, nil
}

// MarkDelivered moves the session's delivery mark to messageID's seq.
func (s *Store) MarkDelivered(ctx context.Context, sessionID, messageID string) error {
	return s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE task_sessions SET delivered_seq = (SELECT seq FROM session_messages
			WHERE id = ? AND session_id = ?) WHERE id = ? AND EXISTS (SELECT 1 FROM session_messages WHERE id = ? AND session_id = ?)`,
			messageID, sessionID, sessionID, messageID, sessionID)
		return affectedOne(res, err, "message")
	})
}
