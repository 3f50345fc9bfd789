package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestAgentResumeAfterRestart: a session left live by a backend that
// stopped is resumed with ACP session/load by the next one, and takes
// prompts again.
func TestAgentResumeAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inDir := func(c *Config) { c.DataDir = dir }
	e1 := newAgentEnv(t, inDir)
	task, sid := e1.startMock("Resume task", "@say before the restart", nil)
	e1.waitState(sid, kanban.SessionIdle)
	e1.close()

	e2 := newAgentEnv(t, inDir)
	e2.waitMessage(task.ID, "status", "Resumed the agent's session")
	s := e2.waitState(sid, kanban.SessionIdle)
	if s.AgentSessionID == "" {
		t.Fatal("no agent session id")
	}
	e2.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@say after the restart"}, nil)
	e2.waitMessage(task.ID, "message", "after the restart")
}

// TestAgentRestartWithoutLoad: an agent that cannot load its session is
// marked failed with "backend restarted", never silently forgotten.
func TestAgentRestartWithoutLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := kandevBinary(t)
	noLoad := withAgentCommands(t, map[string]any{"mock-agent": map[string]any{"command": bin, "args": []string{"agent", "mock", "--no-load"}}})
	inDir := func(c *Config) { c.DataDir = dir }
	e1 := newAgentEnv(t, inDir, noLoad)
	task, sid := e1.startMock("No-load task", "@say hello", nil)
	e1.waitState(sid, kanban.SessionIdle)
	e1.close()

	e2 := newAgentEnv(t, inDir)
	s := e2.waitState(sid, kanban.SessionFailed)
	if !strings.Contains(s.Error, "backend restarted") {
		t.Fatalf("error %q", s.Error)
	}
	e2.waitTask(task.ID, kanban.TaskFailed)
}

// TestAgentWorktree: exec-worktree runs the agent in a real git worktree on
// kandev/<short id> from the base branch; archiving the task removes the
// worktree and keeps the branch. The repository's hooks (an agent can
// write them) never run as the backend.
func TestAgentWorktree(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	hookRan := filepath.Join(t.TempDir(), "hook-ran")
	hook := "#!/bin/sh\ntouch " + hookRan + "\n"
	if err := os.WriteFile(filepath.Join(repo, ".git", "hooks", "post-checkout"), []byte(hook), 0o700); err != nil { //nolint:gosec // a test hook
		t.Fatal(err)
	}
	e := newAgentEnv(t)
	worktree := e.executorProfileNamed("exec-worktree")
	task, sid := e.startMock("Worktree task", "@say in the worktree", map[string]any{"local_path": repo, "executor_profile_id": worktree})
	s := e.waitState(sid, kanban.SessionIdle)
	short := agent.ShortID(task.ID)
	// One repository: the agent works in its worktree, in the task
	// directory worktrees/<short id>.
	taskDir, _ := filepath.Abs(filepath.Join(e.cfg.DataDir, "worktrees", short))
	if filepath.Dir(s.Workdir) != taskDir || filepath.Base(s.Workdir) != filepath.Base(repo) {
		t.Fatalf("workdir %q, want %q in %q", s.Workdir, filepath.Base(repo), taskDir)
	}
	if _, err := os.Stat(filepath.Join(s.Workdir, "README.md")); err != nil {
		t.Fatalf("worktree has no checkout: %v", err)
	}
	if out := gitOut(t, s.Workdir, "rev-parse", "--abbrev-ref", "HEAD"); out != "kandev/"+short {
		t.Fatalf("worktree branch %q", out)
	}
	if _, err := os.Stat(hookRan); !os.IsNotExist(err) {
		t.Fatal("the repository's post-checkout hook ran as the backend")
	}
	e.dispatch(kanban.ActionTaskArchive, action.TaskRefIn{TaskID: task.ID}, nil)
	if _, err := os.Stat(taskDir); !os.IsNotExist(err) {
		t.Fatalf("worktree still there: %v", err)
	}
	if strings.Contains(gitOut(t, repo, "worktree", "list"), short) {
		t.Fatal("git still lists the worktree")
	}
	if gitOut(t, repo, "branch", "--list", "kandev/"+short) == "" {
		t.Fatal("the branch was removed")
	}
	e.waitState(sid, kanban.SessionCancelled)

	// A base branch is caller text: one shaped like a git option is refused
	// when written (kanban.CheckBranch), and a row written before that rule
	// is refused when used, before git runs.
	canary := filepath.Join(t.TempDir(), "pwned")
	f := false
	var out action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Hostile base", "local_path": repo, "start_agent": f}, &out)
	if _, err := e.b.store.DB().Exec(`UPDATE task_repositories SET base_branch = ? WHERE task_id = ?`,
		"--upload-pack=touch "+canary, out.Task.ID); err != nil {
		t.Fatal(err)
	}
	var spawned action.SessionSpawnOut
	e.dispatch(kanban.ActionSessionSpawn, action.SessionSpawnIn{TaskID: out.Task.ID, AgentProfileID: e.profileOf("mock-agent").ID,
		ExecutorProfileID: worktree, Prompt: "@say no"}, &spawned)
	if s := e.waitState(spawned.Session.ID, kanban.SessionFailed); !strings.Contains(s.Error, "not a valid git branch name") {
		t.Fatalf("error %q", s.Error)
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatal("the base branch ran as a git option")
	}
}

// TestAgentWorkspaceMode: a subtask without a repository of its own works
// in its parent's worktree (the default, and inherit_parent); new_workspace
// gives it its own directory; inherit_parent without a parent is refused.
func TestAgentWorkspaceMode(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	e := newAgentEnv(t)
	worktree := e.executorProfileNamed("exec-worktree")
	parent, psid := e.startMock("Parent", "@say parent", map[string]any{"local_path": repo, "executor_profile_id": worktree})
	pdir := e.waitState(psid, kanban.SessionIdle).Workdir
	for _, mode := range []string{"", kanban.WorkspaceInheritParent} {
		in := map[string]any{"parent_id": parent.ID, "executor_profile_id": worktree}
		if mode != "" { // omitted: the default
			in["workspace_mode"] = mode
		}
		_, sid := e.startMock("Child "+mode, "@say child", in)
		if got := e.waitState(sid, kanban.SessionIdle).Workdir; got != pdir {
			t.Fatalf("mode %q: workdir %q, want the parent's %q", mode, got, pdir)
		}
	}
	own, sid := e.startMock("Own", "@say own", map[string]any{"parent_id": parent.ID, "workspace_mode": kanban.WorkspaceNew})
	want, _ := filepath.Abs(filepath.Join(e.cfg.DataDir, "tasks", own.ID))
	if got := e.waitState(sid, kanban.SessionIdle).Workdir; got != want {
		t.Fatalf("new_workspace: workdir %q, want %q", got, want)
	}
	// The finished turns' automations (the seeded Kanban moves tasks on)
	// run after the sessions are idle: let them finish before comparing.
	e.settleFlow()
	before := e.fingerprint()
	err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionTaskCreate,
		map[string]any{"title": "Orphan", "workspace_mode": kanban.WorkspaceInheritParent}, nil)
	if kanban.ErrorCode(err) != kanban.CodeValidation || e.fingerprint() != before {
		t.Fatalf("inherit_parent without a parent: got %v, want VALIDATION_ERROR and no change", err)
	}
}

// executorProfileNamed returns the id of the executor profile of the
// built-in executor name.
func (e *env) executorProfileNamed(name string) string {
	e.t.Helper()
	var profs kanban.List[kanban.ExecutorProfile]
	e.dispatch(kanban.ActionExecutorProfileList, action.ExecutorProfileListIn{}, &profs)
	var ex kanban.List[kanban.Executor]
	e.dispatch(kanban.ActionExecutorList, action.ListIn{}, &ex)
	for _, p := range profs.Items {
		for _, x := range ex.Items {
			if x.ID == p.ExecutorID && x.Name == name {
				return p.ID
			}
		}
	}
	e.t.Fatalf("no executor profile for %s", name)
	return ""
}

// gitRepo creates a git repository with one commit on main.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitOut(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# repo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "add", "README.md")
	gitOut(t, dir, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "init")
	return dir
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
