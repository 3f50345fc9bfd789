package store

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Report describes the database for a diagnostic bundle: the SQLite
// version, the applied migrations and row counts (no content).
func (s *Store) Report(ctx context.Context) (*kanban.StoreReport, error) {
	r := &kanban.StoreReport{Engine: "sqlite", SchemaLatest: LatestVersion()}
	if err := s.db.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&r.EngineVersion); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m kanban.MigrationRecord
		if err := rows.Scan(&m.Version, &m.Name, &m.AppliedAt); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		r.Migrations = append(r.Migrations, m)
		r.SchemaVersion = max(r.SchemaVersion, m.Version)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := s.counts(ctx, &r.Counts); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return r, nil
}

func (s *Store) counts(ctx context.Context, c *kanban.StoreCounts) error {
	for q, dst := range map[string]*int{
		`SELECT COUNT(*) FROM workspaces`:                           &c.Workspaces,
		`SELECT COUNT(*) FROM workflows`:                            &c.Workflows,
		`SELECT COUNT(*) FROM tasks WHERE archived_at IS NOT NULL`:  &c.TasksArchived,
		`SELECT COUNT(*) FROM task_sessions WHERE mcp_attached = 1`: &c.SessionsAttached,
		`SELECT COUNT(*) FROM repositories`:                         &c.Repositories,
		`SELECT COUNT(*) FROM task_worktrees`:                       &c.Worktrees,
		`SELECT COUNT(*) FROM agent_profiles`:                       &c.AgentProfiles,
		`SELECT COUNT(*) FROM executor_profiles`:                    &c.ExecutorProfiles,
	} {
		if err := s.db.QueryRowContext(ctx, q).Scan(dst); err != nil {
			return err
		}
	}
	var err error
	if c.TasksByState, c.Tasks, err = s.byState(ctx, "tasks"); err != nil {
		return err
	}
	if c.SessionsByState, c.Sessions, err = s.byState(ctx, "task_sessions"); err != nil {
		return err
	}
	if c.QuestionsByState, _, err = s.byState(ctx, "questions"); err != nil {
		return err
	}
	c.PermissionsByState, _, err = s.byState(ctx, "agent_permissions")
	return err
}

// byState counts the rows of table (one of ours, never caller input) by
// their state column, and in all.
func (s *Store) byState(ctx context.Context, table string) (map[string]int, int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT state, COUNT(*) FROM `+table+` GROUP BY state`)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, total := map[string]int{}, 0
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, 0, err
		}
		out[st] = n
		total += n
	}
	return out, total, rows.Err()
}
