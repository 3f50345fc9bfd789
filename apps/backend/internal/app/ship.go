package app

import (
	"path/filepath"

	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/forgeconf"
)

// loadForges reads the backend's one forge configuration (DATA_DIR/
// forges.json unless --forges-file names one; a missing file configures
// none): the accounts commit, push and pull requests and the PR watcher
// use, its webhook secrets and auto-merge method, and the identity of
// Kandev's commits. A token_env that agents would inherit is refused at
// start.
func loadForges(cfg Config) (*forgeconf.Set, error) {
	file := cfg.ForgesFile
	if file == "" {
		file = filepath.Join(cfg.DataDir, forgeconf.FileName)
	}
	allow := cfg.Agents.EnvAllow
	set, err := forgeconf.Load(file, forgeconf.Options{AgentEnv: func(name string) bool { return agent.EnvPassed(name, allow) }})
	if err != nil {
		return nil, err
	}
	if set.Len() > 0 {
		cfg.Logger.Info("forge accounts configured", "remotes", set.Len())
	}
	return set, nil
}
