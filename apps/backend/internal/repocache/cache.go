// Package repocache keeps one local clone per remote URL of the
// repositories registered by remote URL only, under the data dir
// (<data>/repo-cache/<hash of the URL>, fsguard.ClonePath), so tasks get
// git worktrees of them like of a local checkout. A URL is cloned once:
// concurrent requests for it wait on the one clone (each told its
// progress), later ones reuse it. Each clone is bounded in size and time
// (worktree.Clone stops one past its bound and leaves nothing); the
// cache is bounded in entries: past MaxClones, the least recently used
// clones no worktree uses are removed.
//
// It imports the domain, fsguard and worktree (the one hardened git
// runner); never the store, the action layer or the runtime.
package repocache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// Defaults of Config.
const (
	DefaultMaxClones = 16
	DefaultMaxBytes  = 2 << 30
	DefaultTimeout   = 10 * time.Minute
)

// tmpMark names a clone being made (or one a crash left).
const tmpMark = ".tmp-"

// Config is what a Cache is made with.
type Config struct {
	Guard *fsguard.Policy
	Git   *worktree.Git
	// Base bounds every clone's life (the backend's lifetime): a clone
	// outlives the request that started it, since others may wait on it.
	Base context.Context
	// MaxClones bounds the clones kept (DefaultMaxClones); MaxBytes each
	// clone's size on disk (DefaultMaxBytes); Timeout each clone's time
	// (DefaultTimeout).
	MaxClones int
	MaxBytes  int64
	Timeout   time.Duration
	// Auth returns the server-side credential for a URL (from the forges
	// file); nil, or a zero Auth, clones without one.
	Auth func(url string) (worktree.Auth, error)
}

// Cache is the clone cache; one serves the backend.
type Cache struct {
	cfg     Config
	mu      sync.Mutex
	flights map[string]*flight
}

// flight is one clone under way; its waiters share its result.
type flight struct {
	done     chan struct{}
	err      error
	mu       sync.Mutex
	watchers []func(worktree.CloneProgress)
}

// New makes the cache and removes what an interrupted clone left.
func New(cfg Config) (*Cache, error) {
	if cfg.Guard == nil || cfg.Git == nil || cfg.Base == nil || cfg.Guard.DataDir() == "" {
		return nil, errors.New("repocache: a policy with a data dir, a git and a base context are required")
	}
	if cfg.MaxClones <= 0 {
		cfg.MaxClones = DefaultMaxClones
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	root := cfg.Guard.CloneRoot()
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("create the clone cache: %w", err)
	}
	stale, err := filepath.Glob(filepath.Join(root, "*"+tmpMark+"*"))
	if err != nil {
		return nil, err
	}
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return nil, fmt.Errorf("remove an interrupted clone: %w", err)
		}
	}
	return &Cache{cfg: cfg, flights: map[string]*flight{}}, nil
}

// Ensure returns the clone of url, cloning it first when there is none
// (waiting on the clone another request started). progress, when set, is
// told the clone's phases. A waiter whose ctx ends stops waiting; the
// clone goes on for the others. The URL is checked first
// (kanban.CheckRemoteURL, then worktree.Clone's https-only rule); errors
// never echo it.
func (c *Cache) Ensure(ctx context.Context, url string, progress func(worktree.CloneProgress)) (fsguard.Dir, error) {
	if url == "" {
		return fsguard.Dir{}, kanban.Errorf(kanban.CodeValidation, "the repository has neither a local path nor a remote URL")
	}
	if err := kanban.CheckRemoteURL("remote_url", url); err != nil {
		return fsguard.Dir{}, err
	}
	c.mu.Lock()
	d, err := c.cfg.Guard.CloneDir(url)
	if err == nil {
		touch(d.Path)
		c.mu.Unlock()
		return d, nil
	}
	if kanban.ErrorCode(err) != kanban.CodeNotFound {
		c.mu.Unlock()
		return fsguard.Dir{}, err
	}
	f := c.flights[url]
	if f == nil {
		f = &flight{done: make(chan struct{})}
		c.flights[url] = f
		go c.clone(url, f)
	}
	if progress != nil {
		f.mu.Lock()
		f.watchers = append(f.watchers, progress)
		f.mu.Unlock()
	}
	c.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
		return fsguard.Dir{}, kanban.Errorf(kanban.CodeUnavailable, "stopped waiting for the repository's clone")
	}
	if f.err != nil {
		return fsguard.Dir{}, f.err
	}
	return c.cfg.Guard.CloneDir(url)
}

// clone makes the clone of url in a temporary directory and renames it
// into place, so a clone is either complete or absent; then it keeps the
// cache within its bound.
func (c *Cache) clone(url string, f *flight) {
	err := c.cloneInto(url, f)
	c.mu.Lock()
	if err == nil {
		c.evict(c.cfg.Guard.ClonePath(url))
	}
	delete(c.flights, url)
	f.err = err
	close(f.done)
	c.mu.Unlock()
}

func (c *Cache) cloneInto(url string, f *flight) error {
	var auth worktree.Auth
	if c.cfg.Auth != nil {
		a, err := c.cfg.Auth(url)
		if err != nil {
			return err
		}
		auth = a
	}
	final := c.cfg.Guard.ClonePath(url)
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	tmp := final + tmpMark + hex.EncodeToString(suffix[:])
	ctx, cancel := context.WithTimeout(c.cfg.Base, c.cfg.Timeout)
	defer cancel()
	err := c.cfg.Git.Clone(ctx, worktree.CloneSpec{URL: url, Auth: auth, Dir: tmp, MaxBytes: c.cfg.MaxBytes, Timeout: c.cfg.Timeout,
		Progress: func(p worktree.CloneProgress) {
			f.mu.Lock()
			ws := slices.Clone(f.watchers)
			f.mu.Unlock()
			for _, w := range ws {
				w(p)
			}
		}})
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("clone: put the clone in place: %w", err)
	}
	return nil
}

// evict removes the least recently used clones no worktree uses while
// the cache holds more than MaxClones (clones in use and keep, the one
// just made, are kept, so it may stay over while they are). Called with
// c.mu held.
func (c *Cache) evict(keep string) {
	root := c.cfg.Guard.CloneRoot()
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	type clone struct {
		path string
		used time.Time
	}
	var clones []clone
	for _, e := range entries {
		if !e.IsDir() || strings.Contains(e.Name(), tmpMark) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		clones = append(clones, clone{filepath.Join(root, e.Name()), info.ModTime()})
	}
	sort.Slice(clones, func(i, j int) bool { return clones[i].used.Before(clones[j].used) })
	removed := 0
	for _, cl := range clones {
		if len(clones)-removed <= c.cfg.MaxClones {
			return
		}
		if cl.path == keep || inUse(cl.path) {
			continue
		}
		if os.RemoveAll(cl.path) == nil {
			removed++
		}
	}
}

// inUse reports whether a clone has worktrees (git's own record of them).
func inUse(path string) bool {
	wts, err := os.ReadDir(filepath.Join(path, ".git", "worktrees"))
	return err == nil && len(wts) > 0
}

// touch marks a clone used now (eviction order).
func touch(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}
