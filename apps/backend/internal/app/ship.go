package app

import (
	"context"
	"path/filepath"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/forgeconf"
	"github.com/kandev/kandev/apps/backend/internal/store"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// newShip builds what commit, push and pull requests are made with: the
// forge accounts of the forges file (DATA_DIR/forges.json unless
// --forges-file names one; a missing file configures none) and git with
// the file's commit identity. A token_env that agents would inherit is
// refused at start.
func newShip(life *lifetime, cfg Config, st *store.Store) (*action.Ship, error) {
	file := cfg.ForgesFile
	if file == "" {
		file = filepath.Join(cfg.DataDir, forgeconf.FileName)
	}
	allow := cfg.Agents.EnvAllow
	set, err := forgeconf.Load(file, forgeconf.Options{AgentEnv: func(name string) bool { return agent.EnvPassed(name, allow) }})
	if err != nil {
		return nil, err
	}
	git, err := worktree.NewGit(worktree.Config{Identity: set.Identity()})
	if err != nil {
		return nil, err
	}
	life.push("git", func(context.Context) error { return git.Close() })
	if set.Len() > 0 {
		cfg.Logger.Info("forge accounts configured", "remotes", set.Len())
	}
	return &action.Ship{Git: git, Forges: set, PRs: st}, nil
}
