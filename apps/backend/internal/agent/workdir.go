package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/taskdir"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
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
	// clones gives repositories registered by remote URL only a local
	// clone to make worktrees from (nil: such a repository gets none).
	clones Clones
	pub    kanban.Publisher
}

// Clones is the clone cache of repositories registered by remote URL only
// (*repocache.Cache).
type Clones interface {
	// Ensure returns the clone of url, cloning it first when needed
	// (reporting its progress); errors are safe to show.
	Ensure(ctx context.Context, url string, progress func(worktree.CloneProgress)) (fsguard.Dir, error)
}

// ShortID is the part of a task id that names its branch and worktree.
func ShortID(taskID string) string { return taskdir.ShortID(taskID) }

// prepare returns the working directory of a session of task t on an
// executor of type execType, creating it when needed. The error text is
// shown to operators: it names what is missing or refused, never file
// contents or paths.
//
// A subtask shares its parent's directory (workspace_mode inherit_parent,
// and by default when it has no repository of its own); new_workspace
// gives it its own. On exec-worktree a task gets one worktree per
// repository (see worktrees).
func (w *workdirs) prepare(ctx context.Context, t *kanban.Task, execType string) (string, error) {
	t, err := w.dirs().Owner(ctx, t)
	if err != nil {
		return "", err
	}
	if execType == executorWorktree {
		return w.worktrees(ctx, t)
	}
	repo, _, err := w.dirs().Repository(ctx, t.ID, "")
	if err != nil {
		return "", err
	}
	if repo != nil && repo.LocalPath != "" {
		checkout, err := w.guard.SourceDir(taskdir.RepositoryPath, repo.LocalPath)
		return checkout.Path, err
	}
	dir := w.dirs().TaskFolder(t.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create the task directory: %w", err)
	}
	d, err := w.guard.KandevDir(dir)
	return d.Path, err
}

// dirs is the directory resolution the runtime shares with the actions
// that read or write a task's workspace.
func (w *workdirs) dirs() taskdir.Dirs { return taskdir.Dirs{Store: w.store, Guard: w.guard} }

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
