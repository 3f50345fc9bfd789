package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Task comments (task_comments): notes from the operator and agents.

const commentCols = `id, task_id, author, agent_profile_id, body, created_at`

func scanComment(r rowSource) (*kanban.Comment, error) {
	var c kanban.Comment
	var created string
	if err := r.Scan(&c.ID, &c.TaskID, &c.Author, &c.AgentProfileID, &c.Body, &created); err != nil {
		return nil, err
	}
	c.CreatedAt = parseTime(created)
	return &c, nil
}

// AddComment records a comment on a task. VALIDATION_ERROR for an empty
// or oversized body or a bad author, NOT_FOUND without the task.
func (s *Store) AddComment(ctx context.Context, c kanban.Comment) (*kanban.Comment, error) {
	if strings.TrimSpace(c.Body) == "" {
		return nil, kanban.FieldError("body", "is required")
	}
	if err := kanban.CheckText("body", c.Body, true, kanban.MaxCommentLen); err != nil {
		return nil, err
	}
	if err := kanban.CheckLine("author", c.Author, true, kanban.MaxNameLen); err != nil {
		return nil, err
	}
	c.ID, c.CreatedAt = kanban.NewID(), kanban.Now()
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "tasks", "task", c.TaskID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO task_comments (`+commentCols+`) VALUES (?, ?, ?, ?, ?, ?)`,
			c.ID, c.TaskID, c.Author, c.AgentProfileID, c.Body, fmtTime(c.CreatedAt))
		return err
	})
	if err != nil {
		if _, ok := kanban.AsError(err); ok {
			return nil, err
		}
		return nil, fmt.Errorf("add comment: %w", err)
	}
	return &c, nil
}

var commentListing = listing[kanban.Comment]{what: "list comments",
	selectFrom: `SELECT ` + commentCols + ` FROM task_comments`, scan: scanComment, cols: []string{"created_at", "id"},
	key: func(c kanban.Comment) []any { return []any{fmtTime(c.CreatedAt), c.ID} }}

// ListComments lists a task's comments, oldest first. NOT_FOUND without
// the task.
func (s *Store) ListComments(ctx context.Context, taskID string, p kanban.Page) (*kanban.List[kanban.Comment], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "tasks", "task", taskID); err != nil {
		return nil, err
	}
	return commentListing.page(ctx, s.stmts, p, `task_id = ?`, taskID)
}
