package app

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// sourcePolicy builds the backend's filesystem policy (internal/fsguard):
// cfg.SourceRoots, or the operator's home directory when none are set, and
// the paths that stay out of every root: the data dir with its token and
// database, the registry of running backends, the system directories and
// the home directory's credential stores. A root the operator set that
// cannot be one refuses the start; a default one that cannot is dropped.
func sourcePolicy(cfg Config, log *slog.Logger) (*fsguard.Policy, error) {
	roots := cfg.SourceRoots
	if len(roots) == 0 {
		roots = fsguard.DefaultRoots()
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	files := []string{filepath.Join(dataDir, TokenFile), filepath.Join(dataDir, TokenHashFile)}
	if cfg.Database == "" {
		db := filepath.Join(dataDir, store.DatabaseFile)
		files = append(files, db, db+"-wal", db+"-shm", db+"-journal")
	}
	pc := fsguard.Config{Roots: roots, DataDir: dataDir, Files: files, Protected: []string{cfg.Registry, DefaultRegistryDir()}}
	p, err := fsguard.New(pc)
	if err != nil && len(cfg.SourceRoots) == 0 {
		// The default root is a convenience, never a reason not to start.
		log.Warn("the home directory cannot be the default source root", "err", err)
		pc.Roots = nil
		p, err = fsguard.New(pc)
	}
	if err != nil {
		return nil, fmt.Errorf("--source-roots: %w", err)
	}
	if len(p.Roots()) == 0 {
		log.Warn("no source roots: no local repository or folder can be registered or used until the operator sets --source-roots (KANDEV_SOURCE_ROOTS)")
	} else {
		log.Info("source roots", "roots", p.Roots())
	}
	return p, nil
}
