package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// An exec-worktree task gets one git worktree per linked repository, all
// on the branch kandev/<short id> of their own repository, in its task
// directory <data>/worktrees/<short id>/<repository name>. Its agent works
// in that worktree when the task has one repository, in the task
// directory when it has several. A repository registered by remote URL
// only is cloned once into the data dir's cache (Clones) and worktreed
// from there. A worktree made before this layout (the task directory
// itself a worktree) keeps working for its one repository.

// worktrees returns the working directory of exec-worktree task t: its
// worktree (one repository) or its task directory (several), creating
// what is missing.
func (w *workdirs) worktrees(ctx context.Context, t *kanban.Task) (string, error) {
	links, err := w.store.ListTaskRepositories(ctx, t.ID)
	if err != nil {
		return "", err
	}
	switch {
	case len(links) == 0:
		return "", errors.New("exec-worktree needs the task to have a repository (a local git checkout or a remote URL)")
	case len(links) > kanban.MaxTaskWorktrees:
		return "", fmt.Errorf("exec-worktree makes at most %d worktrees per task; the task has more repositories", kanban.MaxTaskWorktrees)
	}
	var path string
	for _, l := range links {
		if path, err = w.worktreeOf(ctx, t, l, len(links) > 1); err != nil {
			return "", err
		}
	}
	if len(links) == 1 {
		return path, nil
	}
	d, err := w.guard.KandevDir(w.dirs().WorktreeDir(t.ID))
	return d.Path, err
}

// add makes task t's worktree of the repository of link l (a link about
// to be written) when t already works in worktrees (an exec-worktree
// session made them): the running agent keeps its directory and is told
// the new path. nil when t has none yet (its next exec-worktree session
// makes them all).
func (w *workdirs) add(ctx context.Context, t *kanban.Task, l kanban.TaskRepository) (*kanban.Worktree, error) {
	wts, err := w.store.ListWorktrees(ctx, t.ID)
	if err != nil || len(wts) == 0 {
		return nil, err
	}
	if _, err := w.store.GetWorktree(ctx, t.ID, l.RepositoryID); err != nil && len(wts) >= kanban.MaxTaskWorktrees {
		return nil, kanban.Errorf(kanban.CodeConflict, "the task has the most worktrees a task may have")
	}
	if _, err := w.worktreeOf(ctx, t, l, true); err != nil {
		return nil, err
	}
	return w.store.GetWorktree(ctx, t.ID, l.RepositoryID)
}

// worktreeOf returns task t's worktree of the repository of link l,
// creating it on the new branch kandev/<short id> from the base branch
// when it does not exist yet. several says the task has more than one
// repository (a worktree made before the per-repository layout cannot
// share its task directory).
func (w *workdirs) worktreeOf(ctx context.Context, t *kanban.Task, l kanban.TaskRepository, several bool) (string, error) {
	taskDir := w.dirs().WorktreeDir(t.ID)
	wt, err := w.store.GetWorktree(ctx, t.ID, l.RepositoryID)
	switch {
	case err == nil:
		if several && filepath.Clean(wt.Path) == taskDir {
			return "", kanban.Errorf(kanban.CodeConflict, "the task's worktree was made before tasks had one worktree per repository: archive the task (which removes it) before adding repositories")
		}
		d, err := w.guard.KandevDir(wt.Path)
		if err == nil {
			return d.Path, nil
		}
		if kanban.ErrorCode(err) != kanban.CodeNotFound {
			return "", err
		}
	case kanban.ErrorCode(err) != kanban.CodeNotFound:
		return "", err
	}
	repo, err := w.store.GetRepository(ctx, l.RepositoryID)
	if err != nil {
		return "", err
	}
	src, err := w.source(ctx, t, repo)
	if err != nil {
		return "", err
	}
	path, err := w.slot(ctx, t.ID, repo)
	if err != nil {
		return "", err
	}
	branch := "kandev/" + ShortID(t.ID)
	if err := addWorktree(ctx, src.Path, path, branch, cmp.Or(l.BaseBranch, repo.DefaultBranch)); err != nil {
		return "", err
	}
	if _, err := w.guard.KandevDir(path); err != nil {
		return "", err
	}
	if err := w.store.SaveWorktree(ctx, kanban.Worktree{TaskID: t.ID, RepositoryID: repo.ID, Path: path, Branch: branch}); err != nil {
		return "", err
	}
	return path, nil
}

// source is the checkout worktrees of repo are made from: its local
// checkout, or the cache's clone of its remote URL (cloned now when
// needed, its progress published to the task's workspace).
func (w *workdirs) source(ctx context.Context, t *kanban.Task, repo *kanban.Repository) (fsguard.Dir, error) {
	if repo.LocalPath != "" || repo.RemoteURL == "" {
		return w.dirs().Source(repo)
	}
	if w.clones == nil {
		return fsguard.Dir{}, errors.New("this backend keeps no clones of remote repositories (git is not installed); give the repository a local_path")
	}
	ev := &kanban.RepositoryClone{WorkspaceID: t.WorkspaceID, RepositoryID: repo.ID, TaskID: t.ID, State: kanban.CloneRunning}
	cloned := false
	if _, err := w.guard.CloneDir(repo.RemoteURL); kanban.ErrorCode(err) == kanban.CodeNotFound {
		cloned = true // not cloned yet: this request clones it, or waits on the clone under way
		w.publishClone(ev)
	}
	d, err := w.clones.Ensure(ctx, repo.RemoteURL, func(p worktree.CloneProgress) {
		cloned = true
		e := *ev
		e.Phase, e.Percent = p.Phase, p.Percent
		w.publishClone(&e)
	})
	switch {
	case err != nil:
		ev.State, ev.Error = kanban.CloneFailed, safeText(err)
		w.publishClone(ev)
		return fsguard.Dir{}, kanban.Errorf(cmp.Or(kanban.ErrorCode(err), kanban.CodeUnavailable), "clone the repository: %s", ev.Error)
	case cloned:
		ev.State, ev.Percent = kanban.CloneDone, 100
		w.publishClone(ev)
	}
	return d, nil
}

func (w *workdirs) publishClone(ev *kanban.RepositoryClone) {
	if w.pub != nil {
		kanban.EventRepositoryClone.Publish(w.pub, action.WorkspaceTopic(ev.WorkspaceID), ev)
	}
}

// safeText is an error's text a caller may see: a kanban error's message,
// else a generic one (the detail is for the log).
func safeText(err error) string {
	if e, ok := kanban.AsError(err); ok {
		return e.Message
	}
	return "the clone failed"
}

// slot returns the path of task taskID's new worktree of repo: its name
// in the task directory (a safe form of the repository's name, made
// unique among the task's worktrees).
func (w *workdirs) slot(ctx context.Context, taskID string, repo *kanban.Repository) (string, error) {
	taskDir := w.dirs().WorktreeDir(taskID)
	if err := os.MkdirAll(taskDir, 0o700); err != nil {
		return "", fmt.Errorf("create the task's worktree directory: %w", err)
	}
	if _, err := w.guard.KandevDir(taskDir); err != nil {
		return "", err
	}
	wts, err := w.store.ListWorktrees(ctx, taskID)
	if err != nil {
		return "", err
	}
	base := dirName(repo.Name)
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = base + "-" + strconv.Itoa(i)
		}
		path := filepath.Join(taskDir, name)
		taken := false
		for _, wt := range wts {
			taken = taken || filepath.Clean(wt.Path) == path
		}
		if _, err := os.Lstat(path); !taken && os.IsNotExist(err) {
			return path, nil
		}
	}
}

// dirName is a repository name as a directory name: letters, digits, '.',
// '-' and '_' only, not starting with '.', at most 64 bytes ("repo" when
// nothing is left).
func dirName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.TrimLeft(b.String(), ".-")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		return "repo"
	}
	return s
}

// addWorktree adds the worktree path of the checkout repoDir on branch
// from base (or on branch as it is, when an earlier worktree left it).
// The base branch is text a caller chose: checked again here (a link
// written before the rule existed), then resolved to a commit, after
// --end-of-options so it can never be read as a git option.
func addWorktree(ctx context.Context, repoDir, path, branch, base string) error {
	if kanban.CheckBranch("base_branch", base) != nil {
		return kanban.Errorf(kanban.CodeValidation, "the task's base branch is not a valid git branch name; set another one")
	}
	commit, err := gitOutput(ctx, repoDir, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}")
	if err != nil || commit == "" {
		return kanban.Errorf(kanban.CodeValidation, "the task's base branch does not name a commit in its repository")
	}
	args := []string{"worktree", "add", "-b", branch, "--end-of-options", path, commit}
	if git(ctx, repoDir, "rev-parse", "--verify", "--quiet", "--end-of-options", "refs/heads/"+branch) == nil {
		args = []string{"worktree", "add", "--end-of-options", path, branch} // the branch survived an earlier worktree
	}
	if err := git(ctx, repoDir, args...); err != nil {
		return fmt.Errorf("create the git worktree on branch %s from the base branch: %w", branch, err)
	}
	return nil
}

// removeWorktrees removes the task's worktrees (their branches are kept),
// forgets them, and removes the task directory once empty; a task without
// worktrees is left alone. git runs only in a checkout the policy allows;
// with any other a worktree's directory is removed without git.
func (w *workdirs) removeWorktrees(ctx context.Context, taskID string) error {
	wts, err := w.store.ListWorktrees(ctx, taskID)
	if err != nil {
		return err
	}
	for _, wt := range wts {
		if err := w.removeWorktree(ctx, wt); err != nil {
			return err
		}
	}
	if d, err := w.guard.KandevDir(w.dirs().WorktreeDir(taskID)); err == nil {
		_ = os.Remove(d.Path) // only when empty: a legacy worktree there was removed above
	}
	return nil
}

func (w *workdirs) removeWorktree(ctx context.Context, wt kanban.Worktree) error {
	forget := func() error { return w.store.DeleteWorktree(ctx, wt.TaskID, wt.RepositoryID) }
	repo, err := w.store.GetRepository(ctx, wt.RepositoryID)
	if err != nil {
		return err
	}
	checkout, cerr := w.dirs().Source(repo)
	dir, werr := w.guard.KandevDir(wt.Path)
	switch {
	case werr != nil: // not Kandev's (or gone): nothing of it to remove
		return forget()
	case cerr != nil: // no git in a refused checkout; the worktree is Kandev's own
		if err := os.RemoveAll(dir.Path); err != nil {
			return fmt.Errorf("remove the worktree directory: %w", err)
		}
		return forget()
	}
	if err := git(ctx, checkout.Path, "worktree", "remove", "--force", "--end-of-options", wt.Path); err != nil {
		if _, statErr := os.Stat(wt.Path); statErr == nil {
			return fmt.Errorf("remove the git worktree: %w", err)
		}
		// Already gone from disk: let git forget it.
		_ = git(ctx, checkout.Path, "worktree", "prune")
	}
	return forget()
}
