package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/gittest"
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
	// The running agent adds a fourth itself and writes in it at once, at
	// the path the tool answered (relative to its working directory).
	notes := gitRepoIn(t, root, "notes")
	var repo kanban.Repository
	e.dispatch(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{WorkspaceID: task.WorkspaceID, Name: "notes", LocalPath: notes}, &repo)
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, SessionID: sid, Prompt: "@tool add_branch_to_task_kandev " +
		`{"repository_id":"` + repo.ID + `"}` + "\n@write notes/todo.md later\n@say added"}, nil)
	e.waitMessage(task.ID, "message", "added")
	checkChanges(t, e, task.ID, repo.ID, "todo.md")
	e.dispatch(kanban.ActionTaskArchive, action.TaskRefIn{TaskID: task.ID}, nil)
	if _, err := os.Stat(taskDir); !os.IsNotExist(err) {
		t.Fatalf("the task directory is still there: %v", err)
	}
	for _, repo := range []string{api, web, docs, notes} {
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
	// A task-mode session is shown no absolute server path: this one,
	// which Kandev did not launch, gets them relative to the task
	// directory.
	if out.WorktreePath != "docs" || out.TaskWorkspacePath != "." || out.AgentCwdChanged || strings.Contains(text(res), taskDir) {
		t.Fatalf("got worktree %q in %q (cwd changed %v), want docs in . and no absolute path", out.WorktreePath, out.TaskWorkspacePath, out.AgentCwdChanged)
	}
	want := filepath.Join(taskDir, "docs")
	if _, err := os.Stat(filepath.Join(want, "README.md")); err != nil {
		t.Fatalf("the new worktree has no checkout: %v", err)
	}
	wts, err := e.b.store.ListWorktrees(context.Background(), task.ID)
	if err != nil || len(wts) != 3 {
		t.Fatalf("got %d worktrees (%v), want 3", len(wts), err)
	}
}

// TestRemoteRepositoryClonedOnce: a repository registered by remote URL
// only (a bare repository served by git http-backend on loopback) is
// cloned once into the data dir's cache for two tasks, each getting its
// worktree from the clone, with the clone's progress published to the
// workspace; a repository over the clone size bound fails its session
// cleanly and leaves nothing in the cache; a hostile URL is refused when
// registered, and one written to the store directly is refused at use
// with nothing run.
func TestRemoteRepositoryClonedOnce(t *testing.T) {
	t.Parallel()
	small := servedRemote(t, "small.git", e2eToken, map[string]string{"README.md": "# small\n"})
	big := servedRemote(t, "big.git", "", map[string]string{"big.bin": randomText(t, 3<<20)})
	// The forges file's token for the small remote, which requires it:
	// the clone authenticates with it, as the push does.
	secret, forges := filepath.Join(t.TempDir(), "token"), filepath.Join(t.TempDir(), "forges.json")
	writeFile(t, secret, e2eToken+"\n")
	writeFile(t, forges, `{"repositories":[{"remote_url":"`+small.URL+`","forge":"github","api_url":"http://127.0.0.1:9/api",
		"forge_repo":"octo-org/small","token_file":"`+secret+`"}]}`)
	e := newAgentEnv(t, func(c *Config) { c.Clones = CloneConfig{MaxBytes: 1 << 20}; c.ForgesFile = forges })
	notes := make(chan string, 4096)
	op := e.wsClient(e.token, notes)
	ctx := context.Background()
	ws := e.newTask("Workspace probe").WorkspaceID
	if err := op.Call(ctx, kanban.ActionSubscribe, SubscribeIn{Topics: []string{action.WorkspaceTopic(ws)}}, nil); err != nil {
		t.Fatal(err)
	}
	var repo kanban.Repository
	e.dispatch(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{WorkspaceID: ws, Name: "small", RemoteURL: small.URL, DefaultBranch: "main"}, &repo)
	var dirs, tasks []string
	for _, title := range []string{"First", "Second"} {
		var created action.TaskCreateOut
		e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": title, "repository_id": repo.ID, "start_agent": false}, &created)
		sid := e.spawnMock(created.Task.ID, "@write notes.txt "+title+"\n@say wrote")
		s := e.waitState(sid, kanban.SessionIdle)
		e.waitMessage(created.Task.ID, "message", "wrote")
		dirs, tasks = append(dirs, s.Workdir), append(tasks, created.Task.ID)
		checkChanges(t, e, created.Task.ID, repo.ID, "notes.txt")
	}
	if n := fetchCount(small.Requests()); n != 1 {
		t.Fatalf("got %d clones of the remote for two tasks, want 1", n)
	}
	var c action.CommitOut
	e.dispatch(kanban.ActionTaskCommit, action.CommitIn{TaskID: tasks[0], Message: "Add notes"}, &c)
	var p action.PushOut
	e.dispatch(kanban.ActionTaskPush, action.PushIn{TaskID: tasks[0]}, &p)
	if p.Status != "created" || small.Ref(t, "refs/heads/"+c.Branch) != c.Commit.SHA {
		t.Fatalf("push from the clone's worktree: %+v", p)
	}
	if strings.Contains(e.logs.String(), e2eToken) {
		t.Fatal("the log holds the forge token")
	}
	clone := clonePath(t, e, small.URL)
	for _, d := range dirs {
		if !strings.Contains(gitOut(t, clone, "worktree", "list"), d) {
			t.Fatalf("the clone's worktrees do not include %s", d)
		}
	}
	waitNote(t, notes, kanban.EventRepositoryClone.Name())

	refuseTooLarge(t, e, ws, big.URL, clone)
	refuseHostileRemote(t, e, ws)
}

// refuseTooLarge: a repository over the clone size bound fails its
// session with the reason (not the URL) and leaves the cache holding only
// the clone it had (kept).
func refuseTooLarge(t *testing.T, e *env, ws, url, kept string) {
	t.Helper()
	var repo kanban.Repository
	e.dispatch(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{WorkspaceID: ws, Name: "big", RemoteURL: url, DefaultBranch: "main"}, &repo)
	var created action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Too big", "repository_id": repo.ID, "start_agent": false}, &created)
	s := e.waitState(e.spawnMock(created.Task.ID, "@say never"), kanban.SessionFailed)
	if !strings.Contains(s.Error, "larger than the clone size bound") || strings.Contains(s.Error, url) {
		t.Fatalf("session error %q, want the size bound without the URL", s.Error)
	}
	entries, err := os.ReadDir(filepath.Dir(kept))
	if err != nil || len(entries) != 1 || entries[0].Name() != filepath.Base(kept) {
		t.Fatalf("the cache holds %v (%v), want only the small clone", entries, err)
	}
}

// refuseHostileRemote: a transport-helper URL is refused at registration;
// one written to the store directly (a row from before the rule) fails
// its session with nothing run and nothing cloned.
func refuseHostileRemote(t *testing.T, e *env, ws string) {
	t.Helper()
	canary := filepath.Join(t.TempDir(), "pwned")
	hostile := "ext::sh -c touch% " + canary
	err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionRepositoryCreate,
		action.RepositoryCreateIn{WorkspaceID: ws, Name: "evil", RemoteURL: hostile}, nil)
	if kanban.ErrorCode(err) != kanban.CodeValidation || strings.Contains(err.Error(), canary) {
		t.Fatalf("registering %q: %v, want VALIDATION_ERROR without echo", hostile, err)
	}
	var repo kanban.Repository
	e.dispatch(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{WorkspaceID: ws, Name: "evil", RemoteURL: "https://example.invalid/o/r.git", DefaultBranch: "main"}, &repo)
	if _, err := e.b.store.DB().Exec(`UPDATE repositories SET remote_url = ? WHERE id = ?`, hostile, repo.ID); err != nil {
		t.Fatal(err)
	}
	var created action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Hostile", "repository_id": repo.ID, "start_agent": false}, &created)
	s := e.waitState(e.spawnMock(created.Task.ID, "@say never"), kanban.SessionFailed)
	if strings.Contains(s.Error, canary) {
		t.Fatalf("session error %q echoes the URL", s.Error)
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatal("the URL ran a command")
	}
	if _, err := os.Stat(clonePath(t, e, hostile)); !os.IsNotExist(err) {
		t.Fatalf("a hostile URL was cloned: %v", err)
	}
}

// servedRemote is a bare repository served over smart HTTP on loopback
// (git http-backend; behind token when set) whose main holds files.
func servedRemote(t *testing.T, name, token string, files map[string]string) *gittest.Remote {
	t.Helper()
	repo := gittest.NewRepo(t, files)
	r := gittest.NewRemote(t, gittest.RemoteOptions{Name: name, Token: token})
	repo.Git(t, "push", "--quiet", r.Dir, "main")
	return r
}

// randomText is n bytes that do not compress (hex of random bytes).
func randomText(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// fetchCount counts the fetches a remote served (each starts with one
// upload-pack ref advertisement).
func fetchCount(reqs []gittest.Request) int {
	n := 0
	for _, r := range reqs {
		if r.Method == "GET" && strings.HasSuffix(r.URL, "/info/refs?service=git-upload-pack") {
			n++
		}
	}
	return n
}

// clonePath is where the backend of e keeps the clone of url.
func clonePath(t *testing.T, e *env, url string) string {
	t.Helper()
	p, err := fsguard.New(fsguard.Config{DataDir: e.cfg.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	return p.ClonePath(url)
}

// waitNote waits for a notification named event among those received.
func waitNote(t *testing.T, notes <-chan string, event string) {
	t.Helper()
	deadline := time.After(agentWait)
	for {
		select {
		case n := <-notes:
			if n == event {
				return
			}
		case <-deadline:
			t.Fatalf("no %s notification", event)
		}
	}
}
