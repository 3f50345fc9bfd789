package repocache

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// newCache returns a cache in a fresh data dir.
func newCache(t *testing.T, cfg Config) *Cache {
	t.Helper()
	data := t.TempDir()
	p, err := fsguard.New(fsguard.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	g, err := worktree.NewGit(worktree.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	cfg.Guard, cfg.Git, cfg.Base = p, g, t.Context()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// remote serves a repository with files over smart HTTP (no auth).
func remote(t *testing.T, name string, files map[string]string) *gittest.Remote {
	t.Helper()
	repo := gittest.NewRepo(t, files)
	r := gittest.NewRemote(t, gittest.RemoteOptions{Name: name})
	repo.Git(t, "push", "--quiet", r.Dir, "main")
	return r
}

// fetches counts the fetches a remote served (each starts with one
// upload-pack ref advertisement).
func fetches(r *gittest.Remote) int {
	n := 0
	for _, req := range r.Requests() {
		if req.Method == "GET" && strings.HasSuffix(req.URL, "/info/refs?service=git-upload-pack") {
			n++
		}
	}
	return n
}

// Eight concurrent requests for one URL make one clone, and a later one
// reuses it.
func TestEnsureClonesOncePerURL(t *testing.T) {
	c := newCache(t, Config{})
	r := remote(t, "one.git", map[string]string{"a.txt": "a\n"})
	var wg sync.WaitGroup
	dirs := make([]string, 8)
	errs := make([]error, 8)
	for i := range dirs {
		wg.Go(func() {
			d, err := c.Ensure(t.Context(), r.URL, nil)
			dirs[i], errs[i] = d.Path, err
		})
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Fatalf("request %d: got %q, %v; want %q", i, dirs[i], errs[i], dirs[0])
		}
	}
	if _, err := c.Ensure(t.Context(), r.URL, nil); err != nil {
		t.Fatal(err)
	}
	if got := fetches(r); got != 1 {
		t.Fatalf("got %d fetches, want 1", got)
	}
	if got := strings.TrimSpace(gittest.Run(t, dirs[0], "rev-parse", "refs/heads/main")); got != r.Ref(t, "refs/heads/main") {
		t.Fatalf("the clone's main is %s, want the remote's", got)
	}
}

// Hostile URLs are refused before anything is made; a clone over the
// size bound is refused and leaves nothing in the cache.
func TestEnsureRefusals(t *testing.T) {
	c := newCache(t, Config{MaxBytes: 1 << 20})
	big := make([]byte, 3<<20)
	_, _ = rand.Read(big)
	r := remote(t, "big.git", map[string]string{"big.bin": string(big)})
	canary := filepath.Join(t.TempDir(), "pwned")
	for _, url := range []string{"", "ext::sh -c touch% " + canary, "--upload-pack=touch " + canary, "file:///etc",
		"http://example.com/o/r.git", "https://user:pass@example.com/o/r.git", "git@example.com:o/r.git", r.URL} {
		_, err := c.Ensure(t.Context(), url, nil)
		if kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Errorf("%q: got %v, want VALIDATION_ERROR", url, err)
		}
		if url != "" && strings.Contains(err.Error(), url) {
			t.Errorf("the error %q echoes the URL", err)
		}
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatal("a URL ran a command")
	}
	left, err := os.ReadDir(c.cfg.Guard.CloneRoot())
	if err != nil || len(left) != 0 {
		t.Fatalf("the cache holds %v (%v), want nothing", left, err)
	}
}

// Past MaxClones the least recently used clone no worktree uses goes; one
// with a worktree stays.
func TestEvictionBound(t *testing.T) {
	c := newCache(t, Config{MaxClones: 2})
	var rs []*gittest.Remote
	var dirs []string
	for i, name := range []string{"a.git", "b.git", "c.git", "d.git"} {
		rs = append(rs, remote(t, name, map[string]string{"f.txt": name}))
		d, err := c.Ensure(context.Background(), rs[i].URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d.Path)
		if i == 0 { // a worktree of the first clone keeps it
			gittest.Run(t, d.Path, "worktree", "add", "--quiet", filepath.Join(t.TempDir(), "wt"), "main")
		}
	}
	// a (in use) stays; b went when c came, c when d came.
	for i, want := range []bool{true, false, false, true} {
		_, err := os.Stat(dirs[i])
		if got := err == nil; got != want {
			t.Errorf("clone %d kept: got %v, want %v", i, got, want)
		}
	}
}
