package store

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// SaveWorktree records (or replaces) the worktree of a task.
func (s *Store) SaveWorktree(ctx context.Context, w kanban.Worktree) error {
	return s.tx(ctx, func(tx txn) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_worktrees (task_id, repository_id, path, branch, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET repository_id = excluded.repository_id,
			path = excluded.path, branch = excluded.branch`, w.TaskID, w.RepositoryID, w.Path, w.Branch,
			fmtTime(kanban.Now())); err != nil {
			return fmt.Errorf("save worktree: %w", err)
		}
		return nil
	})
}

// GetWorktree returns a task's worktree (NOT_FOUND when it has none).
func (s *Store) GetWorktree(ctx context.Context, taskID string) (*kanban.Worktree, error) {
	var (
		w       kanban.Worktree
		created string
	)
	err := s.stmts.QueryRowContext(ctx, `SELECT task_id, repository_id, path, branch, created_at FROM task_worktrees
		WHERE task_id = ?`, taskID).Scan(&w.TaskID, &w.RepositoryID, &w.Path, &w.Branch, &created)
	if err != nil {
		return nil, notFound(err, "worktree")
	}
	w.CreatedAt = parseTime(created)
	return &w, nil
}

// DeleteWorktree forgets a task's worktree (no error when it has none).
func (s *Store) DeleteWorktree(ctx context.Context, taskID string) error {
	return s.tx(ctx, func(tx txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM task_worktrees WHERE task_id = ?`, taskID); err != nil {
			return fmt.Errorf("delete worktree: %w", err)
		}
		return nil
	})
}
