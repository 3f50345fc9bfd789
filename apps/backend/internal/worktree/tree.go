package worktree

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// maxGitFile bounds a worktree's ".git" file ("gitdir: PATH\n").
const maxGitFile = 4 << 10

// Spec names a task's worktree as the server knows it (from its store,
// never from a caller): the directory, the repository it belongs to, the
// base branch its changes are measured against and the task branch.
type Spec struct {
	// Dir is the worktree (absolute). It may be Repo itself for a task
	// that works in the repository's own checkout.
	Dir string
	// Repo is the repository's checkout (absolute): its ".git" directory
	// is the only git directory Dir's ".git" file may point into.
	Repo string
	// Base is the base branch (refs/heads/Base), e.g. "main".
	Base string
	// Branch is the task branch (refs/heads/Branch), e.g. "kandev/0a1b2c3d".
	// Empty means the branch checked out in Dir, as for a task that works
	// in the repository's own checkout (CONFLICT when Dir's HEAD is
	// detached).
	Branch string
}

// Tree is one opened worktree. It holds no open files; a Tree is safe for
// concurrent use (git's own locks order writers).
type Tree struct {
	g       *Git
	dir     string // the worktree, symlinks resolved
	gitDir  string // its git directory, checked to belong to Spec.Repo
	base    string
	branch  string
	baseRef string
	headRef string
}

// Open checks spec and the worktree on disk. A worktree's ".git" must be a
// regular file pointing into Repo's ".git/worktrees/" (or, when Dir is
// Repo, a real ".git" directory): an agent that rewrote its ".git" file to
// point at a git directory of its own (with a config that runs programs)
// is refused before git reads anything there.
func (g *Git) Open(ctx context.Context, spec Spec) (*Tree, error) {
	if err := checkBranch("base_branch", spec.Base); err != nil {
		return nil, err
	}
	if spec.Branch != "" {
		if err := checkBranch("branch", spec.Branch); err != nil {
			return nil, err
		}
	}
	if !filepath.IsAbs(spec.Dir) || !filepath.IsAbs(spec.Repo) {
		return nil, refuse(kanban.CodeInternal, "the worktree and repository paths must be absolute")
	}
	dir, err := filepath.EvalSymlinks(spec.Dir)
	if err != nil {
		return nil, refuse(kanban.CodeNotFound, "the task's worktree does not exist on this machine")
	}
	repo, err := filepath.EvalSymlinks(spec.Repo)
	if err != nil {
		return nil, refuse(kanban.CodeNotFound, "the task's repository does not exist on this machine")
	}
	gitDir, err := findGitDir(dir, repo)
	if err != nil {
		return nil, err
	}
	t := &Tree{g: g, dir: dir, gitDir: gitDir, base: spec.Base, branch: spec.Branch,
		baseRef: "refs/heads/" + spec.Base, headRef: "refs/heads/" + spec.Branch}
	if spec.Branch == "" {
		if err := t.checkedOut(ctx); err != nil {
			return nil, err
		}
	}
	if _, err := t.resolve(ctx, t.baseRef); err != nil {
		return nil, err
	}
	return t, nil
}

// Dir returns the worktree's directory (symlinks resolved).
func (t *Tree) Dir() string { return t.dir }

// Branch returns the task branch (the one Spec named, or the one checked
// out when it named none).
func (t *Tree) Branch() string { return t.branch }

// Base returns the base branch.
func (t *Tree) Base() string { return t.base }

// checkedOut makes the branch checked out in the worktree the task branch.
func (t *Tree) checkedOut(ctx context.Context) error {
	res, err := t.git(ctx, call{op: "symbolic-ref", args: []string{"symbolic-ref", "--quiet", "HEAD"}})
	if err != nil {
		return err
	}
	name, ok := strings.CutPrefix(strings.TrimSpace(string(res.out)), "refs/heads/")
	if res.exit != 0 || !ok {
		return refuse(kanban.CodeConflict, "the task's checkout is not on a branch (its HEAD is detached)")
	}
	if err := checkBranch("branch", name); err != nil {
		return refuse(kanban.CodeConflict, "the branch checked out in the task's checkout has a name Kandev does not accept")
	}
	t.branch, t.headRef = name, "refs/heads/"+name
	return nil
}

// findGitDir returns the git directory of the worktree dir of repo.
func findGitDir(dir, repo string) (string, error) {
	common := filepath.Join(repo, ".git")
	st, err := os.Lstat(common)
	if err != nil || !st.IsDir() {
		return "", refuse(kanban.CodeNotFound, "the task's repository is not a git checkout (no .git directory)")
	}
	if dir == repo {
		return common, nil
	}
	bad := refuse(kanban.CodeForbidden, "the worktree's .git file does not point into its repository")
	f := filepath.Join(dir, ".git")
	st, err = os.Lstat(f)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxGitFile {
		return "", bad
	}
	fh, err := os.Open(f)
	if err != nil {
		return "", bad
	}
	defer func() { _ = fh.Close() }()
	b, err := io.ReadAll(io.LimitReader(fh, maxGitFile))
	if err != nil {
		return "", bad
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	target, ok := strings.CutPrefix(string(line), "gitdir: ")
	if !ok || target == "" {
		return "", bad
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	target, err = filepath.EvalSymlinks(target)
	if err != nil {
		return "", bad
	}
	rel, err := filepath.Rel(filepath.Join(common, "worktrees"), target)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || strings.ContainsRune(rel, filepath.Separator) {
		return "", bad
	}
	return target, nil
}

// git runs a command in the tree.
func (t *Tree) git(ctx context.Context, c call) (result, error) {
	c.gitDir, c.workTree = t.gitDir, t.dir
	return t.g.run(ctx, c)
}

// output runs a command that must succeed and returns its stdout.
func (t *Tree) output(ctx context.Context, op string, args ...string) ([]byte, error) {
	res, err := t.git(ctx, call{op: op, args: args})
	if err != nil {
		return nil, err
	}
	if res.exit != 0 {
		return nil, gitFailure(op, res)
	}
	return res.out, nil
}

// resolve returns the commit ref names (NOT_FOUND when it names none).
func (t *Tree) resolve(ctx context.Context, ref string) (string, error) {
	res, err := t.git(ctx, call{op: "rev-parse", args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"}})
	if err != nil {
		return "", err
	}
	if res.exit != 0 {
		what := "the base branch"
		if ref == t.headRef {
			what = "the task branch"
		}
		return "", refuse(kanban.CodeNotFound, what+" does not exist in the repository")
	}
	return strings.TrimSpace(string(res.out)), nil
}

// mergeBase returns the merge-base of HEAD and the base branch: what the
// task's changes are measured against.
func (t *Tree) mergeBase(ctx context.Context) (string, error) {
	res, err := t.git(ctx, call{op: "merge-base", args: []string{"merge-base", "--end-of-options", "HEAD", t.baseRef}})
	if err != nil {
		return "", err
	}
	switch {
	case res.exit == 1 && len(res.out) == 0:
		return "", refuse(kanban.CodeConflict, "the worktree's HEAD shares no history with the base branch")
	case res.exit != 0:
		if _, err := t.resolve(ctx, t.baseRef); err != nil {
			return "", err
		}
		return "", gitFailure("merge-base", res)
	}
	return strings.TrimSpace(string(res.out)), nil
}

// root opens the worktree for reading files without leaving it.
func (t *Tree) root() (*os.Root, error) {
	r, err := os.OpenRoot(t.dir)
	if err != nil {
		return nil, refuse(kanban.CodeNotFound, "the task's worktree cannot be opened")
	}
	return r, nil
}
