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

const permissionColumns = `id, pending_id, session_id, task_id, workspace_id, title, kind, options, state,
	option_id, resolved_by, created_at, resolved_at, message_id`

// CreatePermission stores a pending permission request of a session (task
// and workspace come from the session). Agent-supplied text is bounded
// here: titles are cut, not refused, so an agent's request is never lost.
func (s *Store) CreatePermission(ctx context.Context, p kanban.Permission) (*kanban.Permission, error) {
	if len(p.Options) == 0 || len(p.Options) > kanban.MaxPermissionOptions {
		return nil, kanban.FieldError("options", "must have between 1 and %d options", kanban.MaxPermissionOptions)
	}
	for i, o := range p.Options {
		if o.OptionID == "" || len(o.OptionID) > kanban.MaxPermissionIDLen {
			return nil, kanban.FieldError("options", "item %d has an empty or overlong option_id", i)
		}
		p.Options[i].Name, p.Options[i].Kind = kanban.Clip(o.Name, kanban.MaxPermissionTitleLen), kanban.Clip(o.Kind, kanban.MaxPermissionIDLen)
	}
	p.Title, p.Kind, p.PendingID = kanban.Clip(p.Title, kanban.MaxPermissionTitleLen), kanban.Clip(p.Kind, kanban.MaxPermissionIDLen), kanban.Clip(p.PendingID, kanban.MaxPermissionIDLen)
	opts, err := json.Marshal(p.Options)
	if err != nil {
		return nil, fmt.Errorf("create permission: %w", err)
	}
	var out *kanban.Permission
	err = s.tx(ctx, func(tx txn) error {
		var taskID, wsID string
		if err := tx.QueryRowContext(ctx, `SELECT task_id, workspace_id FROM task_sessions WHERE id = ?`,
			p.SessionID).Scan(&taskID, &wsID); err != nil {
			return notFound(err, "session")
		}
		id := kanban.NewID()
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_permissions (id, pending_id, session_id, task_id,
			workspace_id, title, kind, options, state, created_at, message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, p.PendingID, p.SessionID, taskID, wsID, p.Title, p.Kind, string(opts), kanban.PermissionPending,
			fmtTime(kanban.Now()), p.MessageID); err != nil {
			return fmt.Errorf("create permission: %w", err)
		}
		out, err = getPermission(ctx, tx, id)
		return err
	})
	return out, err
}

// GetPermission returns a permission (NOT_FOUND when missing).
func (s *Store) GetPermission(ctx context.Context, id string) (*kanban.Permission, error) {
	return getPermission(ctx, s.stmts, id)
}

func getPermission(ctx context.Context, q queryer, id string) (*kanban.Permission, error) {
	p, err := scanPermission(q.QueryRowContext(ctx, `SELECT `+permissionColumns+` FROM agent_permissions WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "permission")
	}
	return p, nil
}

// ResolvePermission records optionID (one of the offered options) on a
// pending permission; the first resolution wins.
func (s *Store) ResolvePermission(ctx context.Context, id, optionID, by string) (*kanban.Permission, bool, error) {
	var (
		out     *kanban.Permission
		claimed bool
	)
	err := s.tx(ctx, func(tx txn) error {
		cur, err := getPermission(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur.State != kanban.PermissionPending {
			out = cur
			return nil
		}
		if !slices.ContainsFunc(cur.Options, func(o kanban.PermissionOption) bool { return o.OptionID == optionID }) {
			return kanban.FieldError("option_id", "is not one of the options the agent offered")
		}
		res, err := tx.ExecContext(ctx, `UPDATE agent_permissions SET state = ?, option_id = ?, resolved_by = ?,
			resolved_at = ? WHERE id = ? AND state = ?`, kanban.PermissionResolved, optionID, by,
			fmtTime(kanban.Now()), id, kanban.PermissionPending)
		if err != nil {
			return fmt.Errorf("resolve permission: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("resolve permission: %w", err)
		}
		claimed = n == 1
		out, err = getPermission(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return out, claimed, nil
}

// ClosePermission moves a pending permission to cancelled or expired.
func (s *Store) ClosePermission(ctx context.Context, id, state string) (*kanban.Permission, bool, error) {
	if state != kanban.PermissionCancelled && state != kanban.PermissionExpired {
		return nil, false, kanban.FieldError("state", "must be cancelled or expired")
	}
	var (
		out    *kanban.Permission
		closed bool
	)
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE agent_permissions SET state = ?, resolved_at = ? WHERE id = ? AND state = ?`,
			state, fmtTime(kanban.Now()), id, kanban.PermissionPending)
		if err != nil {
			return fmt.Errorf("close permission: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("close permission: %w", err)
		}
		closed = n == 1
		out, err = getPermission(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return out, closed, nil
}

// ListPermissions lists permissions oldest first, filtered by f.
func (s *Store) ListPermissions(ctx context.Context, f kanban.PermissionFilter, p kanban.Page) (*kanban.List[kanban.Permission], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	var (
		conds []string
		args  []any
	)
	add := func(cond string, v any) { conds, args = append(conds, cond), append(args, v) }
	for _, c := range []struct{ col, v string }{{"workspace_id", f.WorkspaceID}, {"task_id", f.TaskID}, {"session_id", f.SessionID}} {
		if c.v != "" {
			add(c.col+` = ?`, c.v)
		}
	}
	if f.State != "" {
		if !slices.Contains(kanban.PermissionStates, f.State) {
			return nil, kanban.FieldError("state", "must be one of %s", strings.Join(kanban.PermissionStates, ", "))
		}
		add(`state = ?`, f.State)
	}
	return permissionListing.page(ctx, s.stmts, p, strings.Join(conds, " AND "), args...)
}

var permissionListing = listing[kanban.Permission]{what: "list permissions",
	selectFrom: `SELECT ` + permissionColumns + ` FROM agent_permissions`, scan: scanPermission,
	cols: []string{"created_at", "id"},
	key:  func(p kanban.Permission) []any { return []any{fmtTime(p.CreatedAt), p.ID} }}

func scanPermission(r rowSource) (*kanban.Permission, error) {
	var (
		p          kanban.Permission
		opts       string
		createdAt  string
		resolvedAt sql.NullString
	)
	if err := r.Scan(&p.ID, &p.PendingID, &p.SessionID, &p.TaskID, &p.WorkspaceID, &p.Title, &p.Kind, &opts,
		&p.State, &p.OptionID, &p.ResolvedBy, &createdAt, &resolvedAt, &p.MessageID); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(opts), &p.Options); err != nil {
		return nil, fmt.Errorf("permission options: %w", err)
	}
	p.CreatedAt, p.ResolvedAt = parseTime(createdAt), parseTimePtr(resolvedAt)
	return &p, nil
}
