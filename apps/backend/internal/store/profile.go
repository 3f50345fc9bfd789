package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// profileTable describes agent_profiles or executor_profiles, which share
// their listing, naming, default and deletion rules. Fields are SQL
// identifiers (constants), never caller input.
type profileTable struct {
	table       string // agent_profiles
	parent      string // its column naming the parent: agent_id
	parentTable string // agents
	kind        string // the parent's kind in messages: agent
	sessionRef  string // the task_sessions column naming a profile: agent_profile_id
}

var (
	agentProfiles = profileTable{table: "agent_profiles", parent: "agent_id", parentTable: "agents",
		kind: "agent", sessionRef: "agent_profile_id"}
	executorProfiles = profileTable{table: "executor_profiles", parent: "executor_id", parentTable: "executors",
		kind: "executor", sessionRef: "executor_profile_id"}
)

// listProfiles lists t's profiles in creation order (l): only f.ParentID's
// when it is set (NOT_FOUND for a missing parent), only the global ones and
// f.Workspace's when that is set.
func listProfiles[T any](ctx context.Context, q queryer, t profileTable, l listing[T], f kanban.ProfileFilter, p kanban.Page) (*kanban.List[T], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	var (
		conds []string
		args  []any
	)
	if f.ParentID != "" {
		if err := requireRow(ctx, q, t.parentTable, t.kind, f.ParentID); err != nil {
			return nil, err
		}
		conds, args = append(conds, t.parent+` = ?`), append(args, f.ParentID)
	}
	if f.Workspace != "" {
		conds, args = append(conds, `(workspace_id IS NULL OR workspace_id = ?)`), append(args, f.Workspace)
	}
	return l.page(ctx, q, p, strings.Join(conds, " AND "), args...)
}

// claimProfileName refuses (CONFLICT) a name another profile of parentID
// has, in any scope. For a new profile (selfID "") it reports whether it
// becomes the default: a global one does when it is the parent's first
// global profile or wantDefault is set (which then clears the flag on the
// others); a workspace's profile (scoped) never does.
func claimProfileName(ctx context.Context, tx txn, t profileTable, parentID, name, selfID string, scoped, wantDefault bool) (bool, error) {
	var taken, global int
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(CASE WHEN name = ? AND id <> ? THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN workspace_id IS NULL THEN 1 ELSE 0 END), 0) FROM `+t.table+` WHERE `+t.parent+` = ?`,
		name, selfID, parentID).Scan(&taken, &global)
	if err != nil {
		return false, fmt.Errorf("check profile name: %w", err)
	}
	if taken > 0 {
		return false, kanban.Errorf(kanban.CodeConflict, "the %s already has a profile with this name", t.kind)
	}
	if selfID != "" || scoped || (global > 0 && !wantDefault) {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+t.table+` SET is_default = 0 WHERE `+t.parent+` = ?`, parentID); err != nil {
		return false, fmt.Errorf("set default profile: %w", err)
	}
	return true, nil
}

// deleteProfile deletes profile id of parentID, then makes sure one
// remaining global profile is the default. It refuses (CONFLICT) while a
// session whose agent runs or waits to run (queued, starting, running,
// waiting, idle; or a hand-made session its agent attached to) uses the
// profile, and for the parent's last global profile (a workspace's
// profiles never count: they are neither defaults nor usable everywhere).
// The table and column names come from the profileTable constants, never
// from callers, so building the SQL from them is safe (gosec G202).
//
//nolint:gosec
func deleteProfile(ctx context.Context, tx txn, t profileTable, parentID, id string, scoped bool) error {
	var running int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM task_sessions WHERE `+t.sessionRef+` = ? AND state IN (?, ?, ?, ?, ?)`,
		id, string(kanban.SessionQueued), string(kanban.SessionStarting), string(kanban.SessionRunning),
		string(kanban.SessionWaitingForInput), string(kanban.SessionIdle)).Scan(&running); err != nil {
		return fmt.Errorf("delete %s profile: %w", t.kind, err)
	}
	if running > 0 {
		return kanban.Errorf(kanban.CodeConflict, "the %s profile is used by a running session", t.kind)
	}
	if !scoped {
		var total int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+t.table+` WHERE `+t.parent+` = ? AND workspace_id IS NULL`,
			parentID).Scan(&total); err != nil {
			return fmt.Errorf("delete profile: %w", err)
		}
		if total <= 1 {
			return kanban.Errorf(kanban.CodeConflict, "cannot delete the last profile of an %s", t.kind)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+t.table+` WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete profile: %w", err)
	}
	_, err := tx.ExecContext(ctx, `UPDATE `+t.table+` SET is_default = 1 WHERE id = (
		SELECT id FROM `+t.table+` WHERE `+t.parent+` = ? AND workspace_id IS NULL ORDER BY created_at, id LIMIT 1)
		AND NOT EXISTS (SELECT 1 FROM `+t.table+` WHERE `+t.parent+` = ? AND is_default = 1)`, parentID, parentID)
	if err != nil {
		return fmt.Errorf("promote default profile: %w", err)
	}
	return nil
}

// requireScope refuses (NOT_FOUND) a profile scope naming a missing
// workspace; "" (global) needs nothing.
func requireScope(ctx context.Context, q queryer, workspaceID string) error {
	if workspaceID == "" {
		return nil
	}
	return requireRow(ctx, q, "workspaces", "workspace", workspaceID)
}
