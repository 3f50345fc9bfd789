package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const messageColumns = `id, seq, session_id, task_id, author, type, content, turn, created_at`

// AppendMessage appends a message to its session's task conversation. The
// task comes from the session; seq numbers are per task and gapless.
// NOT_FOUND for a missing session, VALIDATION_ERROR for invalid fields.
func (s *Store) AppendMessage(ctx context.Context, m kanban.Message) (*kanban.Message, error) {
	if err := checkMessage(m); err != nil {
		return nil, err
	}
	var out *kanban.Message
	err := s.tx(ctx, func(tx txn) error {
		var taskID string
		err := tx.QueryRowContext(ctx, `SELECT task_id FROM task_sessions WHERE id = ?`, m.SessionID).Scan(&taskID)
		if err != nil {
			return notFound(err, "session")
		}
		if m.TaskID != "" && m.TaskID != taskID {
			return kanban.FieldError("task_id", "does not match the session's task")
		}
		m.TaskID = taskID
		out, err = appendMessage(ctx, tx, m)
		return err
	})
	return out, err
}

// AppendTaskMessage appends a message to a task's conversation that is no
// session's (what the workflow engine did). NOT_FOUND for a missing task.
func (s *Store) AppendTaskMessage(ctx context.Context, taskID string, m kanban.Message) (*kanban.Message, error) {
	m.SessionID, m.TaskID = "", taskID
	if err := checkMessageBody(m); err != nil {
		return nil, err
	}
	var out *kanban.Message
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "tasks", "task", taskID); err != nil {
			return err
		}
		var err error
		out, err = appendMessage(ctx, tx, m)
		return err
	})
	return out, err
}

// appendMessage appends a checked message whose SessionID and TaskID are
// those of an existing session, with the task's next seq.
func appendMessage(ctx context.Context, tx txn, m kanban.Message) (*kanban.Message, error) {
	m.ID, m.CreatedAt = kanban.NewID(), kanban.Now()
	// The task's next seq is computed in the insert.
	if _, err := tx.ExecContext(ctx, `INSERT INTO session_messages (`+messageColumns+`)
		VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM session_messages WHERE task_id = ?), ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.TaskID, nullString(m.SessionID), m.TaskID, m.Author, m.Type,
		m.Content, m.Turn, fmtTime(m.CreatedAt)); err != nil {
		return nil, fmt.Errorf("append message: %w", err)
	}
	return &m, nil
}

func checkMessage(m kanban.Message) error {
	if err := kanban.CheckText("session_id", m.SessionID, true, kanban.MaxNameLen); err != nil {
		return err
	}
	return checkMessageBody(m)
}

// checkMessageBody checks the fields of m other than its session and task.
func checkMessageBody(m kanban.Message) error {
	if err := kanban.CheckText("author", m.Author, true, kanban.MaxNameLen); err != nil {
		return err
	}
	if !slices.Contains(kanban.MessageTypes, m.Type) {
		return kanban.FieldError("type", "must be one of %s", strings.Join(kanban.MessageTypes, ", "))
	}
	if err := kanban.CheckText("content", m.Content, false, kanban.MaxContentLen); err != nil {
		return err
	}
	if m.Turn < 0 {
		return kanban.FieldError("turn", "must not be negative")
	}
	return nil
}

// messageQuery is a validated MessageFilter turned into SQL.
type messageQuery struct {
	sql   string
	args  []any
	limit int
}

// buildMessageQuery validates f and builds its query. Before and After are
// seq bounds independent of the sort direction.
func buildMessageQuery(f kanban.MessageFilter) (*messageQuery, error) {
	if err := kanban.CheckText("task_id", f.TaskID, true, kanban.MaxNameLen); err != nil {
		return nil, err
	}
	pg, err := kanban.Page{Limit: f.Limit}.Normalize()
	if err != nil {
		return nil, err
	}
	q := &messageQuery{sql: `SELECT ` + messageColumns + ` FROM session_messages WHERE task_id = ?`,
		args: []any{f.TaskID}, limit: pg.Limit}
	if f.SessionID != "" {
		q.sql += ` AND session_id = ?`
		q.args = append(q.args, f.SessionID)
	}
	if len(f.Types) > 0 {
		for _, t := range f.Types {
			if !slices.Contains(kanban.MessageTypes, t) {
				return nil, kanban.FieldError("types", "must each be one of %s", strings.Join(kanban.MessageTypes, ", "))
			}
			q.args = append(q.args, t)
		}
		q.sql += ` AND type IN (?` + strings.Repeat(`, ?`, len(f.Types)-1) + `)`
	}
	for _, b := range []struct{ field, cursor, op string }{{"before", f.Before, "<"}, {"after", f.After, ">"}} {
		if b.cursor == "" {
			continue
		}
		var seq int64
		if len(b.cursor) > kanban.MaxCursorLen || decodeCursor(b.cursor, messageCursor, &seq) != nil {
			return nil, kanban.FieldError(b.field, "is not a valid cursor")
		}
		q.sql += ` AND seq ` + b.op + ` ?`
		q.args = append(q.args, seq)
	}
	if f.Desc {
		q.sql += ` ORDER BY seq DESC LIMIT ?`
	} else {
		q.sql += ` ORDER BY seq ASC LIMIT ?`
	}
	q.args = append(q.args, q.limit+1)
	return q, nil
}

// messageCursor tags conversation cursors.
const messageCursor = "messages"

// ListMessages returns a page of a task's conversation (NOT_FOUND for a
// missing task). NextCursor is the seq of the last returned message: pass
// it as Before to continue a Desc listing, as After to continue an
// ascending one.
func (s *Store) ListMessages(ctx context.Context, f kanban.MessageFilter) (*kanban.List[kanban.Message], error) {
	q, err := buildMessageQuery(f)
	if err != nil {
		return nil, err
	}
	if _, err := taskWorkspaceOf(ctx, s.stmts, f.TaskID); err != nil {
		return nil, err
	}
	rows, err := s.stmts.QueryContext(ctx, q.sql, q.args...)
	if err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	defer rows.Close()
	out := &kanban.List[kanban.Message]{Items: []kanban.Message{}}
	var lastSeq int64
	size := 0
	for rows.Next() {
		var (
			m         kanban.Message
			seq       int64
			session   sql.NullString
			createdAt string
		)
		if err := rows.Scan(&m.ID, &seq, &session, &m.TaskID, &m.Author, &m.Type, &m.Content,
			&m.Turn, &createdAt); err != nil {
			return nil, fmt.Errorf("list messages: %w", err)
		}
		m.SessionID = session.String
		content, _ := json.Marshal(m.Content) // a string: cannot fail
		if len(out.Items) == q.limit || (size+len(content) > PageBudget && len(out.Items) > 0) {
			out.NextCursor = encodeCursor(messageCursor, lastSeq)
			break
		}
		size += len(content) + 256 // the other fields are short
		m.CreatedAt = parseTime(createdAt)
		out.Items = append(out.Items, m)
		lastSeq = seq
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	return out, nil
}
