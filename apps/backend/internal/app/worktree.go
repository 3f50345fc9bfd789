package app

import (
	"context"
	"log/slog"

	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// worktreeGit is the git that reads tasks' worktrees (their changes,
// diffs and commits), stopped with the backend. Without git on this
// machine it is nil: the backend runs, and the changes actions answer
// UNAVAILABLE.
func worktreeGit(life *lifetime, log *slog.Logger) *worktree.Git {
	g, err := worktree.NewGit(worktree.Config{})
	if err != nil {
		log.Warn("task changes are unavailable", "error", err.Error())
		return nil
	}
	life.push("git", func(context.Context) error { return g.Close() })
	return g
}
