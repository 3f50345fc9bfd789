package store

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// SaveWorktree records (or replaces) the worktree of a task in one of its
// repositories.
func (s *Store) SaveWorktree(ctx context.Context, w kanban.Worktree) error {
	return s.tx(ctx, func(tx txn) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_worktrees (task_id, repository_id, path, branch, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (task_id, repository_id) DO UPDATE SET
			path = excluded.path, branch = excluded.branch`, w.TaskID, w.RepositoryID, w.Path, w.Branch,
			fmtTime(kanban.Now())); err != nil {
			return fmt.Errorf("save worktree: %w", err)
		}
		return nil
	})
}

// GetWorktree returns a task's worktree of a repository (NOT_FOUND when it
// has none).
func (s *Store) GetWorktree(ctx context.Context, taskID, repositoryID string) (*kanban.Worktree, error) {
	var (
		w       kanban.Worktree
		created string
	)
	err := s.stmts.QueryRowContext(ctx, `SELECT task_id, repository_id, path, branch, created_at FROM task_worktrees
		WHERE task_id = ? AND repository_id = ?`, taskID, repositoryID).Scan(&w.TaskID, &w.RepositoryID, &w.Path, &w.Branch, &created)
	if err != nil {
		return nil, notFound(err, "worktree")
	}
	w.CreatedAt = parseTime(created)
	return &w, nil
}

// ListWorktrees returns a task's worktrees, oldest first: at most
// kanban.MaxTaskWorktrees, which the runtime never exceeds, so the list is
// complete.
func (s *Store) ListWorktrees(ctx context.Context, taskID string) ([]kanban.Worktree, error) {
	scan := func(r rowSource) (*kanban.Worktree, error) {
		var (
			w       kanban.Worktree
			created string
		)
		err := r.Scan(&w.TaskID, &w.RepositoryID, &w.Path, &w.Branch, &created)
		w.CreatedAt = parseTime(created)
		return &w, err
	}
	out, err := scanAll(ctx, s.stmts, scan, `SELECT task_id, repository_id, path, branch, created_at FROM task_worktrees
		WHERE task_id = ? ORDER BY created_at, repository_id LIMIT ?`, taskID, kanban.MaxTaskWorktrees)
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	return out, nil
}

// DeleteWorktree forgets a task's worktree of a repository (no error when
// it has none).
func (s *Store) DeleteWorktree(ctx context.Context, taskID, repositoryID string) error {
	return s.tx(ctx, func(tx txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM task_worktrees WHERE task_id = ? AND repository_id = ?`, taskID, repositoryID); err != nil {
			return fmt.Errorf("delete worktree: %w", err)
		}
		return nil
	})
}
