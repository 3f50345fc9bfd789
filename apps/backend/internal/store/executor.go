package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Executor profile bounds.
const (
	maxExecutorConfigBytes = 64 << 10
	maxScriptBytes         = 64 << 10
)

const (
	executorColumns     = `id, name, type, description, created_at`
	execProfileColumns  = `id, executor_id, name, mcp_policy, config, prepare_script, cleanup_script, is_default, created_at, updated_at`
	execProfileInsertQs = `?, ?, ?, ?, ?, ?, ?, ?, ?, ?`
)

// ListExecutors lists executors by name.
func (s *Store) ListExecutors(ctx context.Context, p kanban.Page) (*kanban.List[kanban.Executor], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	query := `SELECT ` + executorColumns + ` FROM executors`
	var args []any
	if p.Cursor != "" {
		var name string
		if err := decodeCursor(p.Cursor, &name); err != nil {
			return nil, err
		}
		query += ` WHERE name > ?`
		args = append(args, name)
	}
	query += ` ORDER BY name LIMIT ?`
	args = append(args, p.Limit+1)
	out, err := scanAll(ctx, s.db, scanExecutor, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list executors: %w", err)
	}
	return page(out, p.Limit, func(e kanban.Executor) []any { return []any{e.Name} }), nil
}

func executorExists(ctx context.Context, q queryer, id string) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM executors WHERE id = ?`, id).Scan(&n); err != nil {
		return fmt.Errorf("get executor: %w", err)
	}
	if n == 0 {
		return kanban.NotFound("executor")
	}
	return nil
}

// ListExecutorProfiles lists executor profiles in creation order, only
// executorID's when it is not empty (NOT_FOUND for a missing executor).
func (s *Store) ListExecutorProfiles(ctx context.Context, executorID string, p kanban.Page) (*kanban.List[kanban.ExecutorProfile], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	query := `SELECT ` + execProfileColumns + ` FROM executor_profiles WHERE 1 = 1`
	var args []any
	if executorID != "" {
		if err := executorExists(ctx, s.db, executorID); err != nil {
			return nil, err
		}
		query += ` AND executor_id = ?`
		args = append(args, executorID)
	}
	if p.Cursor != "" {
		var at, id string
		if err := decodeCursor(p.Cursor, &at, &id); err != nil {
			return nil, err
		}
		query += ` AND (created_at > ? OR (created_at = ? AND id > ?))`
		args = append(args, at, at, id)
	}
	query += ` ORDER BY created_at, id LIMIT ?`
	args = append(args, p.Limit+1)
	out, err := scanAll(ctx, s.db, scanExecutorProfile, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list executor profiles: %w", err)
	}
	return page(out, p.Limit, func(x kanban.ExecutorProfile) []any { return []any{fmtTime(x.CreatedAt), x.ID} }), nil
}

// GetExecutorProfile returns an executor profile (NOT_FOUND when missing).
func (s *Store) GetExecutorProfile(ctx context.Context, id string) (*kanban.ExecutorProfile, error) {
	return getExecutorProfile(ctx, s.db, id)
}

func getExecutorProfile(ctx context.Context, q queryer, id string) (*kanban.ExecutorProfile, error) {
	p, err := scanExecutorProfile(q.QueryRowContext(ctx,
		`SELECT `+execProfileColumns+` FROM executor_profiles WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "executor profile")
	}
	return p, nil
}

// DefaultExecutorProfile returns the default profile of the first executor
// by name (NOT_FOUND when no executor has a profile).
func (s *Store) DefaultExecutorProfile(ctx context.Context) (*kanban.ExecutorProfile, error) {
	return defaultExecutorProfile(ctx, s.db)
}

func defaultExecutorProfile(ctx context.Context, q queryer) (*kanban.ExecutorProfile, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT p.id FROM executor_profiles p JOIN executors e ON e.id = p.executor_id
		WHERE p.is_default = 1 ORDER BY e.name LIMIT 1`).Scan(&id)
	if err != nil {
		return nil, notFound(err, "executor profile")
	}
	return getExecutorProfile(ctx, q, id)
}

// checkExecutorProfile validates p and returns its config as JSON text.
func checkExecutorProfile(p kanban.ExecutorProfile) (string, error) {
	if err := kanban.CheckText("name", p.Name, true, kanban.MaxNameLen); err != nil {
		return "", err
	}
	if !slices.Contains(kanban.MCPPolicies, p.MCPPolicy) {
		return "", kanban.FieldError("mcp_policy", "must be one of inherit, enabled, disabled, restricted")
	}
	cfg := p.Config
	if cfg == nil {
		cfg = map[string]json.RawMessage{}
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", kanban.FieldError("config", "values must be valid JSON")
	}
	if len(b) > maxExecutorConfigBytes {
		return "", kanban.FieldError("config", "larger than %d bytes", maxExecutorConfigBytes)
	}
	if len(p.PrepareScript) > maxScriptBytes {
		return "", kanban.FieldError("prepare_script", "larger than %d bytes", maxScriptBytes)
	}
	if len(p.CleanupScript) > maxScriptBytes {
		return "", kanban.FieldError("cleanup_script", "larger than %d bytes", maxScriptBytes)
	}
	return string(b), nil
}

// CreateExecutorProfile adds a profile to an executor (MCPPolicy defaults
// to inherit). The executor's first profile becomes its default, as does
// one created with IsDefault. NOT_FOUND for a missing executor, CONFLICT
// when the executor has a profile of that name.
func (s *Store) CreateExecutorProfile(ctx context.Context, p kanban.ExecutorProfile) (*kanban.ExecutorProfile, error) {
	if p.MCPPolicy == "" {
		p.MCPPolicy = kanban.MCPPolicies[0]
	}
	cfg, err := checkExecutorProfile(p)
	if err != nil {
		return nil, err
	}
	var out *kanban.ExecutorProfile
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if err := executorExists(ctx, tx, p.ExecutorID); err != nil {
			return err
		}
		isDefault, err := claimProfileName(ctx, tx, executorProfiles, p.ExecutorID, p.Name, "", p.IsDefault)
		if err != nil {
			return err
		}
		id, now := kanban.NewID(), fmtTime(kanban.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO executor_profiles (`+execProfileColumns+`)
			VALUES (`+execProfileInsertQs+`)`, id, p.ExecutorID, p.Name, p.MCPPolicy, cfg, p.PrepareScript,
			p.CleanupScript, boolInt(isDefault), now, now); err != nil {
			return fmt.Errorf("create executor profile: %w", err)
		}
		out, err = getExecutorProfile(ctx, tx, id)
		return err
	})
	return out, err
}

// UpdateExecutorProfile sets the given fields of a profile (NOT_FOUND when
// missing, CONFLICT when the new name is taken within the executor).
func (s *Store) UpdateExecutorProfile(ctx context.Context, id string, u kanban.ExecutorProfileUpdate) (*kanban.ExecutorProfile, error) {
	var out *kanban.ExecutorProfile
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := getExecutorProfile(ctx, tx, id)
		if err != nil {
			return err
		}
		setIf(&cur.Name, u.Name)
		setIf(&cur.MCPPolicy, u.MCPPolicy)
		setIf(&cur.PrepareScript, u.PrepareScript)
		setIf(&cur.CleanupScript, u.CleanupScript)
		if u.Config != nil {
			cur.Config = u.Config
		}
		cfg, err := checkExecutorProfile(*cur)
		if err != nil {
			return err
		}
		if _, err := claimProfileName(ctx, tx, executorProfiles, cur.ExecutorID, cur.Name, id, false); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE executor_profiles SET name = ?, mcp_policy = ?, config = ?,
			prepare_script = ?, cleanup_script = ?, updated_at = ? WHERE id = ?`, cur.Name, cur.MCPPolicy, cfg,
			cur.PrepareScript, cur.CleanupScript, fmtTime(kanban.Now()), id); err != nil {
			return fmt.Errorf("update executor profile: %w", err)
		}
		out, err = getExecutorProfile(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteExecutorProfile deletes a profile. It refuses (CONFLICT) while a
// RUNNING session uses it and when it is the executor's last profile;
// deleting the default promotes the oldest remaining profile. NOT_FOUND
// when missing.
func (s *Store) DeleteExecutorProfile(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := getExecutorProfile(ctx, tx, id)
		if err != nil {
			return err
		}
		var running int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM task_sessions WHERE executor_profile_id = ? AND state = ?`,
			id, string(kanban.SessionRunning)).Scan(&running); err != nil {
			return fmt.Errorf("delete executor profile: %w", err)
		}
		if running > 0 {
			return kanban.Errorf(kanban.CodeConflict, "the executor profile is used by a running session")
		}
		return deleteProfile(ctx, tx, executorProfiles, cur.ExecutorID, id)
	})
}

// profileTable describes agent_profiles or executor_profiles, which share
// their naming and default rules. Fields are SQL identifiers (constants).
type profileTable struct{ table, parent, kind string }

var (
	agentProfiles    = profileTable{"agent_profiles", "agent_id", "agent"}
	executorProfiles = profileTable{"executor_profiles", "executor_id", "executor"}
)

// claimProfileName refuses (CONFLICT) a name another profile of parentID
// has. For a new profile (selfID "") it reports whether it becomes the
// default: it does when it is the first or wantDefault is set (which then
// clears the flag on the others).
func claimProfileName(ctx context.Context, tx *sql.Tx, t profileTable, parentID, name, selfID string, wantDefault bool) (bool, error) {
	var taken, total int
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(CASE WHEN name = ? AND id <> ? THEN 1 ELSE 0 END), 0),
		COUNT(*) FROM `+t.table+` WHERE `+t.parent+` = ?`, name, selfID, parentID).Scan(&taken, &total)
	if err != nil {
		return false, fmt.Errorf("check profile name: %w", err)
	}
	if taken > 0 {
		return false, kanban.Errorf(kanban.CodeConflict, "the %s already has a profile with this name", t.kind)
	}
	if selfID != "" || (total > 0 && !wantDefault) {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE `+t.table+` SET is_default = 0 WHERE `+t.parent+` = ?`, parentID); err != nil {
		return false, fmt.Errorf("set default profile: %w", err)
	}
	return true, nil
}

// deleteProfile deletes profile id of parentID unless it is the last one,
// then makes sure one remaining profile is the default.
// The table and column names come from the profileTable constants, never
// from callers, so building the SQL from them is safe (gosec G202).
//
//nolint:gosec
func deleteProfile(ctx context.Context, tx *sql.Tx, t profileTable, parentID, id string) error {
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+t.table+` WHERE `+t.parent+` = ?`,
		parentID).Scan(&total); err != nil {
		return fmt.Errorf("delete profile: %w", err)
	}
	if total <= 1 {
		return kanban.Errorf(kanban.CodeConflict, "cannot delete the last profile of an %s", t.kind)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+t.table+` WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete profile: %w", err)
	}
	_, err := tx.ExecContext(ctx, `UPDATE `+t.table+` SET is_default = 1 WHERE id = (
		SELECT id FROM `+t.table+` WHERE `+t.parent+` = ? ORDER BY created_at, id LIMIT 1)
		AND NOT EXISTS (SELECT 1 FROM `+t.table+` WHERE `+t.parent+` = ? AND is_default = 1)`, parentID, parentID)
	if err != nil {
		return fmt.Errorf("promote default profile: %w", err)
	}
	return nil
}

// scanAll runs a query and scans every row with scan.
func scanAll[T any](ctx context.Context, q queryer, scan func(rowSource) (*T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		x, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *x)
	}
	return out, rows.Err()
}

func scanExecutor(r rowSource) (*kanban.Executor, error) {
	var (
		e         kanban.Executor
		createdAt string
	)
	if err := r.Scan(&e.ID, &e.Name, &e.Type, &e.Description, &createdAt); err != nil {
		return nil, err
	}
	e.CreatedAt = parseTime(createdAt)
	return &e, nil
}

func scanExecutorProfile(r rowSource) (*kanban.ExecutorProfile, error) {
	var (
		p                  kanban.ExecutorProfile
		cfg                string
		def                int
		createdAt, updated string
	)
	if err := r.Scan(&p.ID, &p.ExecutorID, &p.Name, &p.MCPPolicy, &cfg, &p.PrepareScript, &p.CleanupScript,
		&def, &createdAt, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(cfg), &p.Config); err != nil {
		return nil, fmt.Errorf("executor profile config: %w", err)
	}
	p.IsDefault, p.CreatedAt, p.UpdatedAt = def != 0, parseTime(createdAt), parseTime(updated)
	return &p, nil
}
