package app

import (
	"context"
	"errors"
	"flag"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/forgeconf"
	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/repocache"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// CloneConfig bounds the clone cache (zero values: repocache's defaults).
type CloneConfig struct {
	// MaxRepos is how many clones are kept; past it the least recently
	// used one no worktree uses is removed.
	MaxRepos int
	// MaxBytes bounds one clone's size on disk; Timeout its time.
	MaxBytes int64
	Timeout  time.Duration
}

// newAgents loads the forge configuration, makes the one git of tasks'
// worktrees and the clone cache that uses it, and builds the agent
// runtime (nil when this backend launches no agents).
func (b *backend) newAgents(guard *fsguard.Policy, pub kanban.Publisher) (*agent.Manager, error) {
	var err error
	if b.forges, err = loadForges(b.cfg); err != nil {
		return nil, err
	}
	b.git = worktreeGit(b.life, b.cfg.Logger, b.forges.Identity())
	clones, err := newClones(b.life.ctx, b.cfg, guard, b.git, b.forges)
	if err != nil {
		return nil, err
	}
	return newRuntime(b.life.ctx, b.cfg, runtimeDeps{store: b.store, pub: pub, events: b.events, guard: guard, token: b.cred.clear,
		backendID: b.shared.id, url: "http://" + b.addr, clones: clones, secret: b.secrets.Resolve})
}

// newClones is the clone cache under the data dir, cloning with the one
// worktree git and the forge account's token of a remote when one is
// configured (none otherwise); nil without git (such repositories then
// get no worktree, with an error saying so).
func newClones(ctx context.Context, cfg Config, guard *fsguard.Policy, g *worktree.Git, forges *forgeconf.Set) (agent.Clones, error) {
	if g == nil {
		return nil, nil
	}
	c, err := repocache.New(repocache.Config{Guard: guard, Git: g, Base: ctx, MaxClones: cfg.Clones.MaxRepos,
		MaxBytes: cfg.Clones.MaxBytes, Timeout: cfg.Clones.Timeout, Auth: func(url string) (worktree.Auth, error) {
			acct, err := forges.For(url)
			if kanban.ErrorCode(err) == kanban.CodeNotFound {
				return worktree.Auth{}, nil // a public remote
			}
			if err != nil {
				return worktree.Auth{}, err
			}
			remote, err := acct.Remote()
			return remote.Auth, err
		}})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// cloneFlags adds serve's clone cache flags.
func cloneFlags(fs *flag.FlagSet) func() (CloneConfig, error) {
	repos := fs.Int("clone-cache-repos", repocache.DefaultMaxClones, "clones of remote-only repositories kept in DATA_DIR/repo-cache; past it the least recently used one no worktree uses is removed")
	mib := fs.Int64("clone-max-mib", repocache.DefaultMaxBytes>>20, "largest clone of a remote-only repository, in MiB on disk; a larger one is stopped and removed")
	timeout := fs.Duration("clone-timeout", repocache.DefaultTimeout, "longest a clone of a remote-only repository may take")
	return func() (CloneConfig, error) {
		if *repos < 1 || *mib < 1 || *timeout <= 0 {
			return CloneConfig{}, errors.New("serve: --clone-cache-repos, --clone-max-mib and --clone-timeout must be positive")
		}
		return CloneConfig{MaxRepos: *repos, MaxBytes: *mib << 20, Timeout: *timeout}, nil
	}
}
