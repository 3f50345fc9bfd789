package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const documentColumns = `task_id, key, type, title, content, revision, created_at, updated_at`

// checkDocument holds the one rule of a document no contract can: a
// single-line title (document.write's contract holds the key pattern, the
// type enum and the bounds).
func checkDocument(d kanban.Document) error {
	return kanban.SingleLine("title", d.Title)
}

// WriteDocument creates the document (TaskID, Key) at revision 1 or stores
// its next revision; every revision is also kept in the revision history.
// An empty Type means markdown for a new document and the current type for
// a revision; an empty Title on a revision keeps the current title.
// NOT_FOUND for a missing task.
func (s *Store) WriteDocument(ctx context.Context, d kanban.Document) (*kanban.Document, error) {
	if err := checkDocument(d); err != nil {
		return nil, err
	}
	var out *kanban.Document
	err := s.tx(ctx, func(tx txn) error {
		if _, err := taskWorkspaceOf(ctx, tx, d.TaskID); err != nil {
			return err
		}
		now := fmtTime(kanban.Now())
		cur, err := getDocument(ctx, tx, d.TaskID, d.Key)
		switch {
		case kanban.ErrorCode(err) == kanban.CodeNotFound:
			if d.Type == "" {
				d.Type = kanban.DocumentTypes[0]
			}
			d.Revision = 1
			_, err = tx.ExecContext(ctx, `INSERT INTO task_documents (`+documentColumns+`)
				VALUES (?, ?, ?, ?, ?, 1, ?, ?)`, d.TaskID, d.Key, d.Type, d.Title, d.Content, now, now)
		case err != nil:
			return err
		default:
			d = reviseDocument(*cur, d)
			_, err = tx.ExecContext(ctx, `UPDATE task_documents SET type = ?, title = ?, content = ?,
				revision = ?, updated_at = ? WHERE task_id = ? AND key = ?`,
				d.Type, d.Title, d.Content, d.Revision, now, d.TaskID, d.Key)
		}
		if err != nil {
			return fmt.Errorf("write document: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_document_revisions (task_id, key, revision,
			title, content, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			d.TaskID, d.Key, d.Revision, d.Title, d.Content, now); err != nil {
			return fmt.Errorf("write document revision: %w", err)
		}
		out, err = getDocument(ctx, tx, d.TaskID, d.Key)
		return err
	})
	return out, err
}

// reviseDocument applies the write d on top of the stored document cur.
func reviseDocument(cur, d kanban.Document) kanban.Document {
	if d.Type == "" {
		d.Type = cur.Type
	}
	if d.Title == "" {
		d.Title = cur.Title
	}
	d.Revision = cur.Revision + 1
	return d
}

// GetDocument returns a document with its content (NOT_FOUND when missing).
func (s *Store) GetDocument(ctx context.Context, taskID, key string) (*kanban.Document, error) {
	return getDocument(ctx, s.stmts, taskID, key)
}

func getDocument(ctx context.Context, q queryer, taskID, key string) (*kanban.Document, error) {
	var (
		d                  kanban.Document
		createdAt, updated string
	)
	err := q.QueryRowContext(ctx, `SELECT `+documentColumns+` FROM task_documents WHERE task_id = ? AND key = ?`,
		taskID, key).Scan(&d.TaskID, &d.Key, &d.Type, &d.Title, &d.Content, &d.Revision, &createdAt, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kanban.NotFound("document")
	}
	if err != nil {
		return nil, fmt.Errorf("get document: %w", err)
	}
	d.CreatedAt, d.UpdatedAt = parseTime(createdAt), parseTime(updated)
	return &d, nil
}

// ListDocuments lists a task's documents by key, without content. NOT_FOUND
// for a missing task.
func (s *Store) ListDocuments(ctx context.Context, taskID string, p kanban.Page) (*kanban.List[kanban.Document], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if _, err := taskWorkspaceOf(ctx, s.stmts, taskID); err != nil {
		return nil, err
	}
	return documentListing.page(ctx, s.stmts, p, `task_id = ?`, taskID)
}

var documentListing = listing[kanban.Document]{what: "list documents",
	selectFrom: `SELECT task_id, key, type, title, revision, created_at, updated_at FROM task_documents`,
	scan:       scanDocumentSummary, cols: []string{"key"}, key: func(d kanban.Document) []any { return []any{d.Key} }}

// scanDocumentSummary scans a document without its content.
func scanDocumentSummary(r rowSource) (*kanban.Document, error) {
	var (
		d                  kanban.Document
		createdAt, updated string
	)
	if err := r.Scan(&d.TaskID, &d.Key, &d.Type, &d.Title, &d.Revision, &createdAt, &updated); err != nil {
		return nil, err
	}
	d.CreatedAt, d.UpdatedAt = parseTime(createdAt), parseTime(updated)
	return &d, nil
}
