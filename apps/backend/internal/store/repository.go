package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const repoCols = `id, workspace_id, name, local_path, remote_url, default_branch, created_at, updated_at`

func scanRepository(r rowSource) (*kanban.Repository, error) {
	var repo kanban.Repository
	var created, updated string
	if err := r.Scan(&repo.ID, &repo.WorkspaceID, &repo.Name, &repo.LocalPath, &repo.RemoteURL,
		&repo.DefaultBranch, &created, &updated); err != nil {
		return nil, err
	}
	repo.CreatedAt, repo.UpdatedAt = parseTime(created), parseTime(updated)
	return &repo, nil
}

func validateLocators(localPath, remoteURL string) error {
	if err := kanban.CheckText("local_path", localPath, false, kanban.MaxPathLen); err != nil {
		return err
	}
	if err := kanban.CheckText("remote_url", remoteURL, false, kanban.MaxURLLen); err != nil {
		return err
	}
	return kanban.CheckRemoteURL("remote_url", remoteURL)
}

// prepareRepository applies defaults (name from the locator's last path
// segment, default branch "main") and validates r.
func prepareRepository(r *kanban.Repository) error {
	if r.WorkspaceID == "" {
		return kanban.FieldError("workspace_id", "is required")
	}
	if err := validateLocators(r.LocalPath, r.RemoteURL); err != nil {
		return err
	}
	if r.LocalPath == "" && r.RemoteURL == "" {
		return kanban.FieldError("local_path", "one of local_path or remote_url is required")
	}
	if r.Name == "" {
		r.Name = repoNameFrom(r.LocalPath + r.RemoteURL)
	}
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	if err := kanban.CheckLine("name", r.Name, true, kanban.MaxNameLen); err != nil {
		return err
	}
	if err := kanban.CheckText("default_branch", r.DefaultBranch, true, kanban.MaxBranchLen); err != nil {
		return err
	}
	return kanban.CheckBranch("default_branch", r.DefaultBranch)
}

// repoNameFrom derives a repository name from a path or URL: its last
// segment without ".git", at most MaxNameLen characters.
func repoNameFrom(locator string) string {
	s := strings.TrimRight(locator, `/\`)
	if i := strings.LastIndexAny(s, `/\:`); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSuffix(s, ".git")
	if s == "" {
		return "repository"
	}
	if utf8.RuneCountInString(s) > kanban.MaxNameLen {
		s = string([]rune(s)[:kanban.MaxNameLen])
	}
	return s
}

// CreateRepository adds a repository to a workspace. CONFLICT when the
// workspace already has one with the same local path or remote URL.
func (s *Store) CreateRepository(ctx context.Context, r kanban.Repository) (*kanban.Repository, error) {
	if err := prepareRepository(&r); err != nil {
		return nil, err
	}
	var out *kanban.Repository
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "workspaces", "workspace", r.WorkspaceID); err != nil {
			return err
		}
		_, err := findRepository(ctx, tx, r.WorkspaceID, r.LocalPath, r.RemoteURL)
		if err == nil {
			return kanban.Errorf(kanban.CodeConflict, "the workspace already has a repository with this local_path or remote_url")
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("create repository: %w", err)
		}
		out, err = insertRepository(ctx, tx, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func insertRepository(ctx context.Context, tx txn, r kanban.Repository) (*kanban.Repository, error) {
	now := kanban.Now()
	r.ID, r.CreatedAt, r.UpdatedAt = kanban.NewID(), now, now
	if _, err := tx.ExecContext(ctx, `INSERT INTO repositories (`+repoCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.WorkspaceID, r.Name, r.LocalPath, r.RemoteURL, r.DefaultBranch, fmtTime(now), fmtTime(now)); err != nil {
		return nil, fmt.Errorf("insert repository: %w", err)
	}
	return &r, nil
}

// GetRepository returns a repository (NOT_FOUND when missing).
func (s *Store) GetRepository(ctx context.Context, id string) (*kanban.Repository, error) {
	return getRepository(ctx, s.stmts, id)
}

func getRepository(ctx context.Context, q queryer, id string) (*kanban.Repository, error) {
	r, err := scanRepository(q.QueryRowContext(ctx, `SELECT `+repoCols+` FROM repositories WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "repository")
	}
	return r, nil
}

// FindRepository finds a workspace repository by local path or, failing
// that, remote URL. VALIDATION_ERROR when neither is given, NOT_FOUND when
// nothing matches.
func (s *Store) FindRepository(ctx context.Context, workspaceID, localPath, remoteURL string) (*kanban.Repository, error) {
	if workspaceID == "" {
		return nil, kanban.FieldError("workspace_id", "is required")
	}
	if localPath == "" && remoteURL == "" {
		return nil, kanban.FieldError("local_path", "one of local_path or remote_url is required")
	}
	if err := validateLocators(localPath, remoteURL); err != nil {
		return nil, err
	}
	r, err := findRepository(ctx, s.stmts, workspaceID, localPath, remoteURL)
	if err != nil {
		return nil, notFound(err, "repository")
	}
	return r, nil
}

// findRepository returns sql.ErrNoRows when nothing matches.
func findRepository(ctx context.Context, q queryer, workspaceID, localPath, remoteURL string) (*kanban.Repository, error) {
	for _, by := range []struct{ col, val string }{{"local_path", localPath}, {"remote_url", remoteURL}} {
		if by.val == "" {
			continue
		}
		r, err := scanRepository(q.QueryRowContext(ctx, `SELECT `+repoCols+` FROM repositories
			WHERE workspace_id = ? AND `+by.col+` = ? ORDER BY created_at, id LIMIT 1`, workspaceID, by.val))
		if !errors.Is(err, sql.ErrNoRows) {
			return r, err
		}
	}
	return nil, sql.ErrNoRows
}

// ListRepositories lists a workspace's repositories in creation order.
func (s *Store) ListRepositories(ctx context.Context, workspaceID string, p kanban.Page) (*kanban.List[kanban.Repository], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "workspaces", "workspace", workspaceID); err != nil {
		return nil, err
	}
	return repositoryListing.page(ctx, s.stmts, p, `workspace_id = ?`, workspaceID)
}

var repositoryListing = listing[kanban.Repository]{what: "list repositories",
	selectFrom: `SELECT ` + repoCols + ` FROM repositories`, scan: scanRepository, cols: []string{"created_at", "id"},
	key: func(r kanban.Repository) []any { return []any{fmtTime(r.CreatedAt), r.ID} }}

// UpdateRepository changes a repository's default branch when given.
func (s *Store) UpdateRepository(ctx context.Context, id string, defaultBranch *string) (*kanban.Repository, error) {
	var out *kanban.Repository
	err := s.tx(ctx, func(tx txn) error {
		r, err := getRepository(ctx, tx, id)
		if err != nil || defaultBranch == nil {
			out = r
			return err
		}
		if err := kanban.CheckText("default_branch", *defaultBranch, true, kanban.MaxBranchLen); err != nil {
			return err
		}
		if err := kanban.CheckBranch("default_branch", *defaultBranch); err != nil {
			return err
		}
		r.DefaultBranch, r.UpdatedAt = *defaultBranch, kanban.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE repositories SET default_branch = ?, updated_at = ? WHERE id = ?`,
			r.DefaultBranch, fmtTime(r.UpdatedAt), id); err != nil {
			return fmt.Errorf("update repository: %w", err)
		}
		out = r
		return nil
	})
	return out, err
}

// attachNewTaskRepo links a task being created to the repository in, found
// by id or locator; a locator unknown to the workspace creates the repository.
func attachNewTaskRepo(ctx context.Context, tx txn, t *kanban.Task, in *kanban.TaskRepositoryInput) error {
	if in == nil || (in.RepositoryID == "" && in.LocalPath == "" && in.RepositoryURL == "") {
		return nil
	}
	var repo *kanban.Repository
	var err error
	if in.RepositoryID != "" {
		if repo, err = getRepository(ctx, tx, in.RepositoryID); err != nil {
			return err
		}
		if repo.WorkspaceID != t.WorkspaceID {
			return kanban.FieldError("repository_id", "must be a repository of the workspace")
		}
	} else {
		repo, err = findRepository(ctx, tx, t.WorkspaceID, in.LocalPath, in.RepositoryURL)
		if errors.Is(err, sql.ErrNoRows) {
			r := kanban.Repository{WorkspaceID: t.WorkspaceID, LocalPath: in.LocalPath, RemoteURL: in.RepositoryURL}
			if err = prepareRepository(&r); err == nil {
				repo, err = insertRepository(ctx, tx, r)
			}
		}
		if err != nil {
			return err
		}
	}
	_, err = upsertTaskRepository(ctx, tx, kanban.TaskRepository{TaskID: t.ID, RepositoryID: repo.ID, BaseBranch: in.BaseBranch}, repo)
	return err
}

// checkBranches refuses a link whose base or checkout branch (the base
// may come from a repository's default branch written before the rule) is
// not a branch name (kanban.CheckBranch).
func checkBranches(tr kanban.TaskRepository) error {
	if err := kanban.CheckBranch("base_branch", tr.BaseBranch); err != nil {
		return err
	}
	return kanban.CheckBranch("checkout_branch", tr.CheckoutBranch)
}

func upsertTaskRepository(ctx context.Context, tx txn, tr kanban.TaskRepository, repo *kanban.Repository) (*kanban.TaskRepository, error) {
	if tr.BaseBranch == "" {
		tr.BaseBranch = repo.DefaultBranch
	}
	if err := checkBranches(tr); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_repositories (task_id, repository_id, base_branch, checkout_branch)
		VALUES (?, ?, ?, ?) ON CONFLICT (task_id, repository_id)
		DO UPDATE SET base_branch = excluded.base_branch, checkout_branch = excluded.checkout_branch`,
		tr.TaskID, tr.RepositoryID, tr.BaseBranch, tr.CheckoutBranch); err != nil {
		return nil, fmt.Errorf("set task repository: %w", err)
	}
	return &tr, nil
}

// SetTaskRepository links a task to a repository of its workspace, or
// updates the link's branches. An empty base branch means the repository's
// default branch.
func (s *Store) SetTaskRepository(ctx context.Context, tr kanban.TaskRepository) (*kanban.TaskRepository, error) {
	if tr.TaskID == "" {
		return nil, kanban.FieldError("task_id", "is required")
	}
	if tr.RepositoryID == "" {
		return nil, kanban.FieldError("repository_id", "is required")
	}
	if err := kanban.CheckText("base_branch", tr.BaseBranch, false, kanban.MaxBranchLen); err != nil {
		return nil, err
	}
	if err := kanban.CheckText("checkout_branch", tr.CheckoutBranch, false, kanban.MaxBranchLen); err != nil {
		return nil, err
	}
	var out *kanban.TaskRepository
	err := s.tx(ctx, func(tx txn) error {
		ws, err := taskWorkspaceOf(ctx, tx, tr.TaskID)
		if err != nil {
			return err
		}
		repo, err := getRepository(ctx, tx, tr.RepositoryID)
		if err != nil {
			return err
		}
		if repo.WorkspaceID != ws {
			return kanban.FieldError("repository_id", "must be a repository of the task's workspace")
		}
		out, err = upsertTaskRepository(ctx, tx, tr, repo)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListTaskRepositories returns a task's repository links ordered by
// repository id. NOT_FOUND when the task is missing.
func (s *Store) ListTaskRepositories(ctx context.Context, taskID string) ([]kanban.TaskRepository, error) {
	if err := requireRow(ctx, s.stmts, "tasks", "task", taskID); err != nil {
		return nil, err
	}
	scan := func(r rowSource) (*kanban.TaskRepository, error) {
		var tr kanban.TaskRepository
		return &tr, r.Scan(&tr.TaskID, &tr.RepositoryID, &tr.BaseBranch, &tr.CheckoutBranch)
	}
	out, err := scanAll(ctx, s.stmts, scan, `SELECT task_id, repository_id, base_branch, checkout_branch
		FROM task_repositories WHERE task_id = ? ORDER BY repository_id`, taskID)
	if err != nil {
		return nil, fmt.Errorf("list task repositories: %w", err)
	}
	if out == nil {
		out = []kanban.TaskRepository{}
	}
	return out, nil
}
