package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const (
	executorColumns     = `id, name, type, description, created_at`
	execProfileColumns  = `id, executor_id, name, mcp_policy, config, prepare_script, cleanup_script, is_default, created_at, updated_at, workspace_id`
	execProfileInsertQs = `?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`
)

// ListExecutors lists executors by name.
func (s *Store) ListExecutors(ctx context.Context, p kanban.Page) (*kanban.List[kanban.Executor], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	return executorListing.page(ctx, s.stmts, p, "")
}

var executorListing = listing[kanban.Executor]{what: "list executors", selectFrom: `SELECT ` + executorColumns + ` FROM executors`,
	scan: scanExecutor, cols: []string{"name"}, key: func(e kanban.Executor) []any { return []any{e.Name} }}

// GetExecutor returns an executor (NOT_FOUND when missing).
func (s *Store) GetExecutor(ctx context.Context, id string) (*kanban.Executor, error) {
	e, err := scanExecutor(s.stmts.QueryRowContext(ctx, `SELECT `+executorColumns+` FROM executors WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "executor")
	}
	return e, nil
}

// ListExecutorProfiles lists executor profiles in creation order, only
// f.ParentID's (an executor; NOT_FOUND when missing) and only those usable
// in f.Workspace when they are set.
func (s *Store) ListExecutorProfiles(ctx context.Context, f kanban.ProfileFilter, p kanban.Page) (*kanban.List[kanban.ExecutorProfile], error) {
	return listProfiles(ctx, s.stmts, executorProfiles, executorProfileListing, f, p)
}

var executorProfileListing = listing[kanban.ExecutorProfile]{what: "list executor profiles",
	selectFrom: `SELECT ` + execProfileColumns + ` FROM executor_profiles`, scan: scanExecutorProfile, cols: []string{"created_at", "id"},
	key: func(x kanban.ExecutorProfile) []any { return []any{fmtTime(x.CreatedAt), x.ID} }}

// GetExecutorProfile returns an executor profile (NOT_FOUND when missing).
func (s *Store) GetExecutorProfile(ctx context.Context, id string) (*kanban.ExecutorProfile, error) {
	return getExecutorProfile(ctx, s.stmts, id)
}

func getExecutorProfile(ctx context.Context, q queryer, id string) (*kanban.ExecutorProfile, error) {
	p, err := scanExecutorProfile(q.QueryRowContext(ctx,
		`SELECT `+execProfileColumns+` FROM executor_profiles WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "executor profile")
	}
	return p, nil
}

// defaultExecutorOrder picks the executor whose default profile is the
// default: the first by name that is neither Docker nor SSH (their
// profiles run only where they are chosen), one of those when no other has
// a profile.
const defaultExecutorOrder = `e.type IN ('docker', 'ssh'), e.name`

// DefaultExecutorProfile returns the default profile of the first executor
// by name (Docker and SSH ones last, defaultExecutorOrder) (NOT_FOUND when no executor has a profile). Defaults are global
// profiles.
func (s *Store) DefaultExecutorProfile(ctx context.Context) (*kanban.ExecutorProfile, error) {
	return defaultExecutorProfile(ctx, s.stmts)
}

func defaultExecutorProfile(ctx context.Context, q queryer) (*kanban.ExecutorProfile, error) {
	p, err := scanExecutorProfile(q.QueryRowContext(ctx, `SELECT `+execProfileColumns+` FROM executor_profiles WHERE id = (
		SELECT p.id FROM executor_profiles p JOIN executors e ON e.id = p.executor_id
		WHERE p.is_default = 1 AND p.workspace_id IS NULL ORDER BY `+defaultExecutorOrder+` LIMIT 1)`))
	if err != nil {
		return nil, notFound(err, "executor profile")
	}
	return p, nil
}

// checkExecutorProfile validates p and returns its config as JSON text.
func checkExecutorProfile(p kanban.ExecutorProfile) (string, error) {
	if err := kanban.SingleLine("name", p.Name); err != nil {
		return "", err
	}
	cfg := p.Config
	if cfg == nil {
		cfg = map[string]json.RawMessage{}
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", kanban.FieldError("config", "values must be valid JSON")
	}
	if len(b) > kanban.MaxExecutorConfigBytes {
		return "", kanban.FieldError("config", "larger than %d bytes", kanban.MaxExecutorConfigBytes)
	}
	return string(b), nil
}

// CreateExecutorProfile adds a profile to an executor (MCPPolicy defaults
// to inherit), global or of p.WorkspaceID. The executor's first global
// profile becomes its default, as does a global one created with
// IsDefault; a workspace's never does. NOT_FOUND for a missing executor or
// workspace, CONFLICT when the executor has a profile of that name.
func (s *Store) CreateExecutorProfile(ctx context.Context, p kanban.ExecutorProfile) (*kanban.ExecutorProfile, error) {
	if p.MCPPolicy == "" {
		p.MCPPolicy = kanban.MCPPolicies[0]
	}
	cfg, err := checkExecutorProfile(p)
	if err != nil {
		return nil, err
	}
	var out *kanban.ExecutorProfile
	err = s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "executors", "executor", p.ExecutorID); err != nil {
			return err
		}
		if err := requireScope(ctx, tx, p.WorkspaceID); err != nil {
			return err
		}
		isDefault, err := claimProfileName(ctx, tx, executorProfiles, p.ExecutorID, p.Name, "", p.WorkspaceID != "", p.IsDefault)
		if err != nil {
			return err
		}
		id, now := kanban.NewID(), fmtTime(kanban.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO executor_profiles (`+execProfileColumns+`)
			VALUES (`+execProfileInsertQs+`)`, id, p.ExecutorID, p.Name, p.MCPPolicy, cfg, p.PrepareScript,
			p.CleanupScript, boolInt(isDefault), now, now, nullString(p.WorkspaceID)); err != nil {
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
	err := s.tx(ctx, func(tx txn) error {
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
		if _, err := claimProfileName(ctx, tx, executorProfiles, cur.ExecutorID, cur.Name, id, cur.WorkspaceID != "", false); err != nil {
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
// RUNNING session uses it and when it is the executor's last global
// profile; deleting the default promotes the oldest remaining global
// profile. NOT_FOUND when missing.
func (s *Store) DeleteExecutorProfile(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx txn) error {
		cur, err := getExecutorProfile(ctx, tx, id)
		if err != nil {
			return err
		}
		return deleteProfile(ctx, tx, executorProfiles, cur.ExecutorID, id, cur.WorkspaceID != "")
	})
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
		ws                 sql.NullString
	)
	if err := r.Scan(&p.ID, &p.ExecutorID, &p.Name, &p.MCPPolicy, &cfg, &p.PrepareScript, &p.CleanupScript,
		&def, &createdAt, &updated, &ws); err != nil {
		return nil, err
	}
	p.WorkspaceID = ws.String
	if err := json.Unmarshal([]byte(cfg), &p.Config); err != nil {
		return nil, fmt.Errorf("executor profile config: %w", err)
	}
	p.IsDefault, p.CreatedAt, p.UpdatedAt = def != 0, parseTime(createdAt), parseTime(updated)
	return &p, nil
}
