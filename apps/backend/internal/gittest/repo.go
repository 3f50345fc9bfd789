package gittest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Repo is a throwaway repository with a first commit on main.
type Repo struct {
	// Dir is the repository's checkout.
	Dir string
	git string
}

// NewRepo creates a repository whose main branch holds files (path →
// content) in one commit.
func NewRepo(t testing.TB, files map[string]string) *Repo {
	t.Helper()
	r := &Repo{Dir: filepath.Join(t.TempDir(), "repo"), git: gitPath(t)}
	run(t, filepath.Dir(r.Dir), "init", "--quiet", "--initial-branch=main", r.Dir)
	for p, c := range files {
		WriteFile(t, r.Dir, p, c)
	}
	r.Git(t, "add", "-A")
	r.Git(t, "commit", "--quiet", "--allow-empty", "-m", "initial")
	return r
}

// Git runs git in the checkout and returns its combined output.
func (r *Repo) Git(t testing.TB, args ...string) string {
	t.Helper()
	return run(t, r.Dir, args...)
}

// Head returns the commit a ref names.
func (r *Repo) Head(t testing.TB, ref string) string {
	t.Helper()
	return strings.TrimSpace(r.Git(t, "rev-parse", "--verify", "--end-of-options", ref))
}

// Worktree adds a worktree on a new branch from base, as Kandev's runtime
// does (`git worktree add -b BRANCH PATH BASE`), and returns its path.
func (r *Repo) Worktree(t testing.TB, branch, base string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "wt")
	r.Git(t, "worktree", "add", "--quiet", "-b", branch, dir, base)
	return dir
}

// Run runs git in dir (a worktree) and returns its combined output.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return run(t, dir, args...)
}

// WriteFile writes content to dir/p, creating directories.
func WriteFile(t testing.TB, dir, p, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil { //nolint:gosec // G301: a test repository, modes as a checkout has them
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil { //nolint:gosec // G306: as above
		t.Fatal(err)
	}
}
