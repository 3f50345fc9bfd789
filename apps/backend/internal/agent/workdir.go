package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/taskdir"
)

// Executor types of the built-in executors.
const (
	executorLocal    = "local"
	executorWorktree = "worktree"
)

// gitTimeout bounds every git command the runtime runs.
const gitTimeout = 60 * time.Second

// workdirs prepares the directories agents run in, under the filesystem
// policy: a repository checkout is checked at every use (its row may
// predate the policy), Kandev's own folders must be what it made.
type workdirs struct {
	store kanban.Store
	guard *fsguard.Policy
}

// ShortID is the part of a task id that names its branch and worktree.
func ShortID(taskID string) string {
	id := strings.ReplaceAll(taskID, "-", "")
	if len(id) > 8 {
		id = id[:8]
	}
	return id
}

// prepare returns the working directory of a session of task t on an
// executor of type execType, creating it when needed. The error text is
// shown to operators: it names what is missing or refused, never file
// contents or paths.
//
// A subtask shares its parent's directory (workspace_mode inherit_parent,
// and by default when it has no repository of its own); new_workspace
// gives it its own.
func (w *workdirs) prepare(ctx context.Context, t *kanban.Task, execType string) (string, error) {
	t, err := w.dirs().Owner(ctx, t)
	if err != nil {
		return "", err
	}
	repo, link, err := w.dirs().Repository(ctx, t.ID, "")
	if err != nil {
		return "", err
	}
	var checkout fsguard.Dir
	if repo != nil && repo.LocalPath != "" {
		if checkout, err = w.guard.SourceDir(taskdir.RepositoryPath, repo.LocalPath); err != nil {
			return "", err
		}
	}
	if execType != executorWorktree {
		if checkout.Path != "" {
			return checkout.Path, nil
		}
		dir := w.dirs().TaskFolder(t.ID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("create the task directory: %w", err)
		}
		d, err := w.guard.KandevDir(dir)
		return d.Path, err
	}
	if checkout.Path == "" {
		return "", errors.New("exec-worktree needs the task to have a repository with a local_path (a git repository)")
	}
	return w.worktree(ctx, t, repo.ID, checkout.Path, cmp.Or(link.BaseBranch, repo.DefaultBranch))
}

// dirs is the directory resolution the runtime shares with the actions
// that read or write a task's workspace.
func (w *workdirs) dirs() taskdir.Dirs { return taskdir.Dirs{Store: w.store, Guard: w.guard} }

// worktree returns the task's git worktree of the checkout repoDir (of
// repository repoID), creating it on the new branch kandev/<short id> from
// base when it does not exist yet.
func (w *workdirs) worktree(ctx context.Context, t *kanban.Task, repoID, repoDir, base string) (string, error) {
	if wt, err := w.store.GetWorktree(ctx, t.ID); err == nil {
		d, err := w.guard.KandevDir(wt.Path)
		if err == nil {
			return d.Path, nil
		}
		if kanban.ErrorCode(err) != kanban.CodeNotFound {
			return "", err
		}
	} else if kanban.ErrorCode(err) != kanban.CodeNotFound {
		return "", err
	}
	short := ShortID(t.ID)
	path := filepath.Join(w.guard.DataDir(), "worktrees", short)
	branch := "kandev/" + short
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create the worktrees directory: %w", err)
	}
	// The base branch is text a caller chose: checked again here (a link
	// written before the rule existed), then resolved to a commit, after
	// --end-of-options so it can never be read as a git option.
	if kanban.CheckBranch("base_branch", base) != nil {
		return "", errors.New("the task's base branch is not a valid git branch name; set another one")
	}
	commit, err := gitOutput(ctx, repoDir, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}")
	if err != nil || commit == "" {
		return "", errors.New("the task's base branch does not name a commit in its repository")
	}
	args := []string{"worktree", "add", "-b", branch, "--end-of-options", path, commit}
	if git(ctx, repoDir, "rev-parse", "--verify", "--quiet", "--end-of-options", "refs/heads/"+branch) == nil {
		args = []string{"worktree", "add", "--end-of-options", path, branch} // the branch survived an earlier worktree
	}
	if err := git(ctx, repoDir, args...); err != nil {
		return "", fmt.Errorf("create the git worktree on branch %s from the base branch: %w", branch, err)
	}
	if _, err := w.guard.KandevDir(path); err != nil {
		return "", err
	}
	if err := w.store.SaveWorktree(ctx, kanban.Worktree{TaskID: t.ID, RepositoryID: repoID, Path: path, Branch: branch}); err != nil {
		return "", err
	}
	return path, nil
}

// removeWorktree removes the task's worktree (the branch is kept) and
// forgets it; a task without a worktree is left alone. git runs only in a
// checkout the policy allows; with any other the worktree's directory is
// removed without git.
func (w *workdirs) removeWorktree(ctx context.Context, taskID string) error {
	wt, err := w.store.GetWorktree(ctx, taskID)
	if kanban.ErrorCode(err) == kanban.CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	repo, err := w.store.GetRepository(ctx, wt.RepositoryID)
	if err != nil {
		return err
	}
	checkout, cerr := w.guard.SourceDir(taskdir.RepositoryPath, repo.LocalPath)
	dir, werr := w.guard.KandevDir(wt.Path)
	switch {
	case werr != nil: // not Kandev's (or gone): nothing of it to remove
		return w.store.DeleteWorktree(ctx, taskID)
	case cerr != nil: // no git in a refused checkout; the worktree is Kandev's own
		if err := os.RemoveAll(dir.Path); err != nil {
			return fmt.Errorf("remove the worktree directory: %w", err)
		}
		return w.store.DeleteWorktree(ctx, taskID)
	}
	if err := git(ctx, checkout.Path, "worktree", "remove", "--force", "--end-of-options", wt.Path); err != nil {
		if _, statErr := os.Stat(wt.Path); statErr == nil {
			return fmt.Errorf("remove the git worktree: %w", err)
		}
		// Already gone from disk: let git forget it.
		_ = git(ctx, checkout.Path, "worktree", "prune")
	}
	return w.store.DeleteWorktree(ctx, taskID)
}

// git runs a git command in dir, bounded in time; its error carries git's
// own message (about refs and paths we chose), clipped. Every argument a
// caller or the store supplied comes after "--end-of-options".
func git(ctx context.Context, dir string, args ...string) error {
	_, err := gitOutput(ctx, dir, args...)
	return err
}

// gitEnv is environ without git's own variables (GIT_DIR, GIT_EXEC_PATH,
// GIT_SSH_COMMAND, GIT_CONFIG_*, …), which would redirect what the
// backend's git commands read or run.
func gitEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "GIT_") {
			out = append(out, kv)
		}
	}
	return out
}

// gitOutput runs a git command in dir and returns its trimmed output.
func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	// The repository's own hooks and fsmonitor command never run as the
	// backend (an agent can write them), nor does a system config.
	full := append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...) //nolint:gosec // git with arguments the runtime builds; caller text only after --end-of-options
	cmd.Dir = dir
	cmd.Env = append(gitEnv(os.Environ()), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, kanban.Clip(text, 500))
	}
	return text, nil
}
