package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const artifactColumns = `id, task_id, session_id, kind, data, created_at`

// CreateArtifact stores a JSON artifact about a task. SessionID, optional,
// names the publishing session, which may belong to a related task.
// NOT_FOUND for a missing task or session, VALIDATION_ERROR for a bad kind
// or payload.
func (s *Store) CreateArtifact(ctx context.Context, a kanban.Artifact) (*kanban.Artifact, error) {
	if len(a.Data) > kanban.MaxArtifactDataBytes {
		return nil, kanban.FieldError("data", "larger than %d bytes", kanban.MaxArtifactDataBytes)
	}
	if len(a.Data) == 0 || !json.Valid(a.Data) {
		return nil, kanban.FieldError("data", "must be valid JSON")
	}
	var out *kanban.Artifact
	err := s.tx(ctx, func(tx txn) error {
		if _, err := taskWorkspaceOf(ctx, tx, a.TaskID); err != nil {
			return err
		}
		if a.SessionID != "" {
			if _, err := getSession(ctx, tx, a.SessionID); err != nil {
				return err
			}
		}
		a.ID, a.CreatedAt = kanban.NewID(), kanban.Now()
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_artifacts (`+artifactColumns+`)
			VALUES (?, ?, ?, ?, ?, ?)`, a.ID, a.TaskID, nullString(a.SessionID), a.Kind, string(a.Data),
			fmtTime(a.CreatedAt)); err != nil {
			return fmt.Errorf("create artifact: %w", err)
		}
		a.Data = slices.Clone(a.Data)
		out = &a
		return nil
	})
	return out, err
}

// LatestArtifact returns the newest artifact of kind for the task
// (NOT_FOUND when there is none).
func (s *Store) LatestArtifact(ctx context.Context, taskID, kind string) (*kanban.Artifact, error) {
	row := s.stmts.QueryRowContext(ctx, `SELECT `+artifactColumns+` FROM task_artifacts
		WHERE task_id = ? AND kind = ? ORDER BY created_at DESC, id DESC LIMIT 1`, taskID, kind)
	a, err := scanArtifact(row)
	if err != nil {
		return nil, notFound(err, "artifact")
	}
	return a, nil
}

// ListArtifacts lists a task's artifacts newest first; an empty kind lists
// every kind. NOT_FOUND for a missing task.
func (s *Store) ListArtifacts(ctx context.Context, taskID, kind string, p kanban.Page) (*kanban.List[kanban.Artifact], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	where, args := `task_id = ?`, []any{taskID}
	if kind != "" {
		where, args = where+` AND kind = ?`, append(args, kind)
	}
	if _, err := taskWorkspaceOf(ctx, s.stmts, taskID); err != nil {
		return nil, err
	}
	return artifactListing.page(ctx, s.stmts, p, where, args...)
}

var artifactListing = listing[kanban.Artifact]{what: "list artifacts",
	selectFrom: `SELECT ` + artifactColumns + ` FROM task_artifacts`, scan: scanArtifact,
	cols: []string{"created_at", "id"}, desc: true,
	key: func(a kanban.Artifact) []any { return []any{fmtTime(a.CreatedAt), a.ID} }}

// DeleteArtifacts deletes the task's artifacts of kind created before
// before (every one for the zero time) and returns how many were deleted
// (0 is not an error). NOT_FOUND for a missing task.
func (s *Store) DeleteArtifacts(ctx context.Context, taskID, kind string, before time.Time) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx txn) error {
		if _, err := taskWorkspaceOf(ctx, tx, taskID); err != nil {
			return err
		}
		q, args := `DELETE FROM task_artifacts WHERE task_id = ? AND kind = ?`, []any{taskID, kind}
		if !before.IsZero() {
			q, args = q+` AND created_at < ?`, append(args, fmtTime(before))
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("delete artifacts: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

func scanArtifact(r rowSource) (*kanban.Artifact, error) {
	var (
		a               kanban.Artifact
		sessionID       sql.NullString
		data, createdAt string
	)
	if err := r.Scan(&a.ID, &a.TaskID, &sessionID, &a.Kind, &data, &createdAt); err != nil {
		return nil, err
	}
	a.SessionID, a.Data, a.CreatedAt = sessionID.String, json.RawMessage(data), parseTime(createdAt)
	return &a, nil
}
