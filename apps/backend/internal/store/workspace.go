package store

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const workspaceCols = `id, name, description, created_at, updated_at`

// validateWorkspace holds the one rule of a workspace no contract can: a
// single-line name (workspace.create and workspace.update bound its length
// and the description's; seeding passes a constant).
func validateWorkspace(name string) error {
	return kanban.SingleLine("name", name)
}

// CreateWorkspace creates a workspace. VALIDATION_ERROR for a missing or
// too long name or a too long description.
func (s *Store) CreateWorkspace(ctx context.Context, name, description string) (*kanban.Workspace, error) {
	if err := validateWorkspace(name); err != nil {
		return nil, err
	}
	now := kanban.Now()
	w := &kanban.Workspace{ID: kanban.NewID(), Name: name, Description: description, CreatedAt: now, UpdatedAt: now}
	err := s.tx(ctx, func(tx txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO workspaces (`+workspaceCols+`) VALUES (?, ?, ?, ?, ?)`,
			w.ID, w.Name, w.Description, fmtTime(now), fmtTime(now))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	return w, nil
}

// GetWorkspace returns a workspace (NOT_FOUND when missing).
func (s *Store) GetWorkspace(ctx context.Context, id string) (*kanban.Workspace, error) {
	return getWorkspace(ctx, s.stmts, id)
}

func getWorkspace(ctx context.Context, q queryer, id string) (*kanban.Workspace, error) {
	w, err := scanWorkspace(q.QueryRowContext(ctx, `SELECT `+workspaceCols+` FROM workspaces WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "workspace")
	}
	return w, nil
}

func scanWorkspace(r rowSource) (*kanban.Workspace, error) {
	var w kanban.Workspace
	var created, updated string
	if err := r.Scan(&w.ID, &w.Name, &w.Description, &created, &updated); err != nil {
		return nil, err
	}
	w.CreatedAt, w.UpdatedAt = parseTime(created), parseTime(updated)
	return &w, nil
}

// ListWorkspaces lists workspaces in creation order.
func (s *Store) ListWorkspaces(ctx context.Context, p kanban.Page) (*kanban.List[kanban.Workspace], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	return workspaceListing.page(ctx, s.stmts, p, "")
}

// DefaultWorkspaceID returns the id of the first workspace in
// ListWorkspaces' order: the workspace a call without workspace_id means.
func (s *Store) DefaultWorkspaceID(ctx context.Context) (string, error) {
	var id string
	err := s.stmts.QueryRowContext(ctx, `SELECT id FROM workspaces ORDER BY created_at, id LIMIT 1`).Scan(&id)
	if err != nil {
		return "", notFound(err, "workspace")
	}
	return id, nil
}

var workspaceListing = listing[kanban.Workspace]{what: "list workspaces",
	selectFrom: `SELECT ` + workspaceCols + ` FROM workspaces`, scan: scanWorkspace, cols: []string{"created_at", "id"},
	key: func(w kanban.Workspace) []any { return []any{fmtTime(w.CreatedAt), w.ID} }}

// UpdateWorkspace changes the given fields of a workspace.
func (s *Store) UpdateWorkspace(ctx context.Context, id string, name, description *string) (*kanban.Workspace, error) {
	var out *kanban.Workspace
	err := s.tx(ctx, func(tx txn) error {
		w, err := getWorkspace(ctx, tx, id)
		if err != nil {
			return err
		}
		setIf(&w.Name, name)
		setIf(&w.Description, description)
		if err := validateWorkspace(w.Name); err != nil {
			return err
		}
		w.UpdatedAt = kanban.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE workspaces SET name = ?, description = ?, updated_at = ? WHERE id = ?`,
			w.Name, w.Description, fmtTime(w.UpdatedAt), id); err != nil {
			return fmt.Errorf("update workspace: %w", err)
		}
		out = w
		return nil
	})
	return out, err
}

// requireRow returns NOT_FOUND(kind) unless table has a row with id. table
// is always one of our constants.
func requireRow(ctx context.Context, q queryer, table, kind, id string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM `+table+` WHERE id = ?`, id).Scan(&one)
	return notFound(err, kind)
}
