package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// gitRepoIn makes a git repository <parent>/<name> on main with one
// commit (README.md).
func gitRepoIn(t *testing.T, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "README.md"), "# "+name+"\n")
	gitOut(t, dir, "add", "README.md")
	gitOut(t, dir, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "init")
	return dir
}

// repoIDs maps the names of a task's repositories to their ids.
func (e *env) repoIDs(taskID string) map[string]string {
	e.t.Helper()
	ctx := context.Background()
	links, err := e.b.store.ListTaskRepositories(ctx, taskID)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range links {
		r, err := e.b.store.GetRepository(ctx, l.RepositoryID)
		if err != nil {
			e.t.Fatal(err)
		}
		out[r.Name] = r.ID
	}
	return out
}

// spawnMock starts an exec-worktree mock agent session of an existing
// task with prompt.
func (e *env) spawnMock(taskID, prompt string) string {
	e.t.Helper()
	var spawned action.SessionSpawnOut
	e.dispatch(kanban.ActionSessionSpawn, action.SessionSpawnIn{TaskID: taskID, AgentProfileID: e.profileOf("mock-agent").ID,
		ExecutorProfileID: e.executorProfileNamed("exec-worktree"), Prompt: prompt}, &spawned)
	return spawned.Session.ID
}

// TestMultiRepositoryTask: a task with two local repositories gets a
// worktree of each in its task directory, where its agent works; the
// mock agent edits both, the changes actions list each repository's
// change and commit commits in one repository only; add_branch_to_task
// through a real MCP client session makes a third worktree at once
// (its working directory unchanged); a hostile or missing base branch
// is refused with nothing linked or made; archiving removes every
// worktree and the task directory, keeping the branches.
func TestMultiRepositoryTask(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	api, web, docs := gitRepoIn(t, root, "api"), gitRepoIn(t, root, "web"), gitRepoIn(t, root, "docs")
	e := newAgentEnv(t)
	f := false
	var created action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Two repositories", "local_path": api, "start_agent": f}, &created)
	task := created.Task
	e.dispatch(kanban.ActionWorkspaceSourceAdd, map[string]any{"task_id": task.ID,
		"sources": []map[string]any{{"kind": "repository", "local_path": web}}}, nil)
	sid := e.spawnMock(task.ID, "Edit both.\n@write api/src/api.go package api\n@write web/index.html <h1>hi</h1>\n@say edited")
	s := e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "edited")
	short := agent.ShortID(task.ID)
	taskDir, _ := filepath.Abs(filepath.Join(e.cfg.DataDir, "worktrees", short))
	if s.Workdir != taskDir {
		t.Fatalf("workdir %q, want the task directory %q", s.Workdir, taskDir)
	}
	for _, name := range []string{"api", "web"} {
		if got := strings.TrimSpace(gitOut(t, filepath.Join(taskDir, name), "rev-parse", "--abbrev-ref", "HEAD")); got != "kandev/"+short {
			t.Fatalf("%s: worktree on %q, want kandev/%s", name, got, short)
		}
	}
	ids := e.repoIDs(task.ID)
	checkChanges(t, e, task.ID, ids["api"], "src/api.go")
	checkChanges(t, e, task.ID, ids["web"], "index.html")
	err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionTaskChangesList, map[string]any{"task_id": task.ID}, nil)
	if kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Fatalf("changes without repository_id: %v, want VALIDATION_ERROR", err)
	}
	var c action.CommitOut
	e.dispatch(kanban.ActionTaskCommit, action.CommitIn{TaskID: task.ID, RepositoryID: ids["web"], Message: "Add the page"}, &c)
	if c.RepositoryID != ids["web"] || strings.TrimSpace(gitOut(t, web, "rev-parse", "kandev/"+short)) != c.Commit.SHA {
		t.Fatalf("commit %+v did not land on web's task branch", c)
	}
	if gitOut(t, api, "rev-parse", "kandev/"+short) != gitOut(t, api, "rev-parse", "main") {
		t.Fatal("committing web moved api's task branch")
	}

	addThroughMCP(t, e, task, docs, taskDir)
	e.dispatch(kanban.ActionTaskArchive, action.TaskRefIn{TaskID: task.ID}, nil)
	if _, err := os.Stat(taskDir); !os.IsNotExist(err) {
		t.Fatalf("the task directory is still there: %v", err)
	}
	for _, repo := range []string{api, web, docs} {
		if strings.Contains(gitOut(t, repo, "worktree", "list"), short) || gitOut(t, repo, "branch", "--list", "kandev/"+short) == "" {
			t.Fatalf("%s: the worktree is still listed, or the branch is gone", repo)
		}
	}
}

// checkChanges: the task's changes in repository repoID are the one new
// file path.
func checkChanges(t *testing.T, e *env, taskID, repoID, path string) {
	t.Helper()
	var ch action.ChangesOut
	e.dispatch(kanban.ActionTaskChangesList, action.ChangesIn{TaskID: taskID, RepositoryID: repoID}, &ch)
	if ch.Changes == nil || ch.Total != 1 || ch.Items[0].Path != path || ch.RepositoryID != repoID {
		t.Fatalf("changes of %s: got %+v, want the one file %s", repoID, ch, path)
	}
}

// addThroughMCP: the task's own session adds a third repository (the
// operator registered it) with add_branch_to_task_kandev over a real MCP
// client session, and gets its worktree at once; hostile and missing
// base branches change nothing.
func addThroughMCP(t *testing.T, e *env, task *kanban.Task, docs, taskDir string) {
	t.Helper()
	var repo kanban.Repository
	e.dispatch(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{WorkspaceID: task.WorkspaceID, Name: "docs", LocalPath: docs}, &repo)
	sess := e.sessionMCP(kanban.ModeTask, task.ID)
	canary := filepath.Join(t.TempDir(), "pwned")
	for _, base := range []string{"--upload-pack=touch " + canary, "no-such-branch", "a..b", "-x"} {
		args, _ := json.Marshal(map[string]any{"repository_id": repo.ID, "base_branch": base})
		res := e.call(sess.Client, "add_branch_to_task_kandev", string(args))
		if !res.IsError || strings.Contains(text(res), base) {
			t.Fatalf("base branch %q: got %q, want a refusal that does not echo it", base, text(res))
		}
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatal("a base branch ran as a git option")
	}
	if _, ok := e.repoIDs(task.ID)["docs"]; ok {
		t.Fatal("a refused add linked the repository")
	}
	if _, err := os.Stat(filepath.Join(taskDir, "docs")); !os.IsNotExist(err) {
		t.Fatalf("a refused add left a worktree: %v", err)
	}
	res := e.call(sess.Client, "add_branch_to_task_kandev", `{"repository_id":"`+repo.ID+`"}`)
	var out action.TaskBranchOut
	if res.IsError || json.Unmarshal([]byte(text(res)), &out) != nil {
		t.Fatalf("add_branch_to_task_kandev: %s", text(res))
	}
	want := filepath.Join(taskDir, "docs")
	if out.WorktreePath != want || out.TaskWorkspacePath != taskDir || out.AgentCwdChanged {
		t.Fatalf("got worktree %q in %q (cwd changed %v), want %q in %q", out.WorktreePath, out.TaskWorkspacePath, out.AgentCwdChanged, want, taskDir)
	}
	if _, err := os.Stat(filepath.Join(want, "README.md")); err != nil {
		t.Fatalf("the new worktree has no checkout: %v", err)
	}
	wts, err := e.b.store.ListWorktrees(context.Background(), task.ID)
	if err != nil || len(wts) != 3 {
		t.Fatalf("got %d worktrees (%v), want 3", len(wts), err)
	}
}
