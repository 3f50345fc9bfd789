package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const taskBranch = "kandev/0a1b2c3d"

var testIdentity = Identity{Name: "Kandev", Email: "kandev@example.com"}

// fixture is a real repository, a task worktree on its own branch and a
// Tree opened on it.
type fixture struct {
	g    *Git
	repo *gittest.Repo
	wt   string
	tree *Tree
}

func newFixture(t *testing.T, files map[string]string, cfg Config) *fixture {
	t.Helper()
	repo := gittest.NewRepo(t, files)
	wt := repo.Worktree(t, taskBranch, "main")
	if cfg.Identity == (Identity{}) {
		cfg.Identity = testIdentity
	}
	g, err := NewGit(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	tree, err := g.Open(t.Context(), Spec{Dir: wt, Repo: repo.Dir, Base: "main", Branch: taskBranch})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{g: g, repo: repo, wt: wt, tree: tree}
}

func (f *fixture) write(t *testing.T, p, content string) { gittest.WriteFile(t, f.wt, p, content) }

func (f *fixture) git(t *testing.T, args ...string) string { return gittest.Run(t, f.wt, args...) }

func (f *fixture) remove(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(filepath.Join(f.wt, p)); err != nil {
		t.Fatal(err)
	}
}

// lines returns n numbered lines.
func lines(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(prefix)
		b.WriteString(" line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteByte('\n')
	}
	return b.String()
}

// wantRefusal checks err is a worktree *Error with code whose text and
// detail contain none of the forbidden strings (paths, names, tokens). It
// returns a copy of the error (a value, so a caller may ignore it).
func wantRefusal(t *testing.T, err error, code kanban.Code, forbidden ...string) Error {
	t.Helper()
	var we *Error
	if !errors.As(err, &we) {
		t.Fatalf("got %v (%T), want a *worktree.Error with code %s", err, err, code)
	}
	if got := kanban.ErrorCode(err); got != code {
		t.Fatalf("got code %s (%v), want %s", got, err, code)
	}
	for _, s := range forbidden {
		if len(s) < 3 { // "." or "a/" are in any message
			continue
		}
		if strings.Contains(err.Error(), s) {
			t.Fatalf("error %q echoes %q", err.Error(), s)
		}
	}
	return *we
}
