package app

import (
	"context"
	"log/slog"

	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// worktreeGit is the one git of tasks' worktrees: the changes and review
// actions read them (changes, diffs, commits), and commit and push write
// them as id (the forges file's commit identity). It is stopped with the
// backend. Without git on this machine it is nil: the backend runs, and
// those actions answer UNAVAILABLE.
func worktreeGit(life *lifetime, log *slog.Logger, id worktree.Identity) *worktree.Git {
	g, err := worktree.NewGit(worktree.Config{Identity: id})
	if err != nil {
		log.Warn("task changes, commit and push are unavailable", "error", err.Error())
		return nil
	}
	life.push("git", func(context.Context) error { return g.Close() })
	return g
}
