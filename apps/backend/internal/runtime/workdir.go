package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

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

// workdirs prepares the directories agents run in.
type workdirs struct {
	store   kanban.Store
	dataDir string
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
// shown to operators: it names what is missing, never file contents.
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
	if execType != executorWorktree {
		if repo != nil && repo.LocalPath != "" {
			if st, err := os.Stat(repo.LocalPath); err != nil || !st.IsDir() {
				return "", errors.New("the task's repository local_path is not a directory on this machine")
			}
			return repo.LocalPath, nil
		}
		dir := filepath.Join(w.dataDir, "tasks", t.ID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("create the task directory: %w", err)
		}
		return dir, nil
	}
	if repo == nil || repo.LocalPath == "" {
		return "", errors.New("exec-worktree needs the task to have a repository with a local_path (a git repository)")
	}
	return w.worktree(ctx, t, repo, link)
}

// dirs is the directory resolution the runtime shares with the actions
// that read or write a task's workspace.
func (w *workdirs) dirs() taskdir.Dirs { return taskdir.Dirs{Store: w.store, DataDir: w.dataDir} }

// worktree returns the task's git worktree, creating it on the new branch
// kandev/<short id> from the base branch when it does not exist yet.
func (w *workdirs) worktree(ctx context.Context, t *kanban.Task, repo *kanban.Repository, link *kanban.TaskRepository) (string, error) {
	if wt, err := w.store.GetWorktree(ctx, t.ID); err == nil {
		if st, err := os.Stat(wt.Path); err == nil && st.IsDir() {
			return wt.Path, nil
		}
	} else if kanban.ErrorCode(err) != kanban.CodeNotFound {
		return "", err
	}
	short := ShortID(t.ID)
	path := filepath.Join(w.dataDir, "worktrees", short)
	branch := "kandev/" + short
	base := link.BaseBranch
	if base == "" {
		base = repo.DefaultBranch
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create the worktrees directory: %w", err)
	}
	// The base branch is text a caller chose: checked again here (a link
	// written before the rule existed), then resolved to a commit, after
	// --end-of-options so it can never be read as a git option.
	if kanban.CheckBranch("base_branch", base) != nil {
		return "", errors.New("the task's base branch is not a valid git branch name; set another one")
	}
	commit, err := gitOutput(ctx, repo.LocalPath, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}")
	if err != nil || commit == "" {
		return "", errors.New("the task's base branch does not name a commit in its repository")
	}
	args := []string{"worktree", "add", "-b", branch, "--end-of-options", path, commit}
	if git(ctx, repo.LocalPath, "rev-parse", "--verify", "--quiet", "--end-of-options", "refs/heads/"+branch) == nil {
		args = []string{"worktree", "add", "--end-of-options", path, branch} // the branch survived an earlier worktree
	}
	if err := git(ctx, repo.LocalPath, args...); err != nil {
		return "", fmt.Errorf("create the git worktree on branch %s from the base branch: %w", branch, err)
	}
	if err := w.store.SaveWorktree(ctx, kanban.Worktree{TaskID: t.ID, RepositoryID: repo.ID, Path: path, Branch: branch}); err != nil {
		return "", err
	}
	return path, nil
}

// removeWorktree removes the task's worktree (the branch is kept) and
// forgets it; a task without a worktree is left alone.
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
	if err := git(ctx, repo.LocalPath, "worktree", "remove", "--force", "--end-of-options", wt.Path); err != nil {
		if _, statErr := os.Stat(wt.Path); statErr == nil {
			return fmt.Errorf("remove the git worktree: %w", err)
		}
		// Already gone from disk: let git forget it.
		_ = git(ctx, repo.LocalPath, "worktree", "prune")
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
