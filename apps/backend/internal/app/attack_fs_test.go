package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Regression tests of issue 24's filesystem attacks, driven as the attacker
// is: a task session's own token, through its MCP tools and the WebSocket
// API, with the database fingerprinted around every refusal.

// registerForbidden is the refusal of a session that names a repository or
// folder its workspace does not have (decision D1).
const registerForbidden = "FORBIDDEN: registering a new repository or folder is for the operator; " +
	"attach one the workspace already has, or ask the operator to register it"

// attackEnv is a backend whose operator token is its data dir's token file
// (kandev serve without KANDEV_TOKEN); it returns the token's text.
func attackEnv(t *testing.T, opts ...func(*Config)) (*env, string) {
	t.Helper()
	e := newEnvWith(t, append([]func(*Config){func(c *Config) { c.Token = "" }}, opts...)...)
	b, err := os.ReadFile(filepath.Join(e.cfg.DataDir, TokenFile))
	if err != nil {
		t.Fatalf("read the token file: %v", err)
	}
	e.token = strings.TrimSpace(string(b))
	if len(e.token) < 32 {
		t.Fatalf("token file holds %d characters", len(e.token))
	}
	return e, e.token
}

// taskFolder creates the per-task folder a task without a repository works
// in (<data dir>/tasks/<id>), as the runtime does when it starts an agent.
func taskFolder(e *env, taskID string) string {
	e.t.Helper()
	dir := filepath.Join(e.cfg.DataDir, "tasks", taskID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	return dir
}

// fileBlock is show_rich_output's arguments for one file block.
func fileBlock(path string) string {
	return `{"version":1,"title":"T","blocks":[{"type":"file","path":` + mustJSONString(path) + `}]}`
}

// refusedNoLeak calls a tool that must be refused with an error containing
// want, change nothing and leak none of secrets.
func refusedNoLeak(e *env, c *client.Client, tool, args, want string, secrets ...string) {
	e.t.Helper()
	before := e.fingerprint()
	r := e.call(c, tool, args)
	if !r.IsError || !strings.Contains(text(r), want) {
		e.t.Errorf("%s %s: got error=%v %q, want an error containing %q", tool, args, r.IsError, text(r), want)
	}
	for _, s := range secrets {
		if strings.Contains(text(r), s) || strings.Contains(fmt.Sprint(r.StructuredContent), s) {
			e.t.Errorf("%s %s: the answer holds a secret or a server path", tool, args)
		}
	}
	if e.fingerprint() != before {
		e.t.Errorf("%s %s: the refused call changed the database", tool, args)
	}
}

// TestAttackDataDirFolderReadsToken (attack 1): a task session registers
// the data dir as a folder source and previews its token file. Refused:
// the session may register nothing, the operator may not register the data
// dir either, and the token is in no answer and no stored artifact.
func TestAttackDataDirFolderReadsToken(t *testing.T) {
	t.Parallel()
	e, tok := attackEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	dataDir := e.cfg.DataDir
	before := e.fingerprint()

	for _, src := range []string{
		`{"kind":"folder","local_path":` + mustJSONString(dataDir) + `}`,
		`{"kind":"folder","local_path":"/etc"}`,
		`{"kind":"repository","local_path":` + mustJSONString(dataDir) + `}`,
	} {
		refusedNoLeak(e, s.Client, "add_workspace_sources_kandev", `{"sources":[`+src+`]}`, registerForbidden, tok)
	}
	refusedNoLeak(e, s.Client, "show_rich_output_kandev", fileBlock("token"), "", tok)
	refusedNoLeak(e, s.Client, "show_rich_output_kandev", fileBlock("passwd"), "", tok)

	// The same over the WebSocket API with the session's token.
	c := e.wsClient(s.Token, nil)
	err := c.Call(context.Background(), kanban.ActionWorkspaceSourceAdd,
		map[string]any{"sources": []map[string]any{{"kind": "folder", "local_path": dataDir}}}, nil)
	if err == nil || err.Error() != registerForbidden {
		t.Fatalf("workspace.source.add over the WebSocket: got %v, want %s", err, registerForbidden)
	}
	var art kanban.Artifact
	err = c.Call(context.Background(), kanban.ActionArtifactCreate, map[string]any{"kind": kanban.ArtifactRichOutput,
		"data": map[string]any{"version": 1, "title": "T", "blocks": []map[string]any{{"type": "file", "path": "token"}}}}, &art)
	if err == nil || strings.Contains(err.Error(), tok) || strings.Contains(string(art.Data), tok) {
		t.Fatalf("artifact.create over the WebSocket: got %v, want a refusal without the token", err)
	}

	// Whoever calls: the operator may not register the data dir either.
	op := e.wsClient(e.token, nil)
	err = op.Call(context.Background(), kanban.ActionWorkspaceSourceAdd, map[string]any{"task_id": s.TaskID,
		"sources": []map[string]any{{"kind": "folder", "local_path": dataDir}}}, nil)
	if ke, ok := kanban.AsError(err); !ok || ke.Code != kanban.CodeValidation || strings.Contains(ke.Message, dataDir) {
		t.Fatalf("operator registering the data dir: got %v, want a VALIDATION_ERROR that does not echo the path", err)
	}
	if after := e.fingerprint(); after != before || strings.Contains(after, tok) {
		t.Fatal("the refused calls changed the database")
	}
}

// pathCase is one local path an attacker registers.
type pathCase struct{ name, path, operatorWant string }

// hostilePaths are the paths of attack 2, with the operator's refusal.
func hostilePaths(e *env, taskID string) []pathCase {
	const protected = "is, contains or lies inside a path Kandev protects"
	return []pathCase{
		{"root", "/", protected},
		{"etc", "/etc", protected},
		{"proc self root", "/proc/self/root", protected},
		{"data dir", e.cfg.DataDir, protected},
		{"data dir, not clean", e.cfg.DataDir + "/tasks/..", protected},
		{"a task folder", taskFolder(e, taskID), protected},
		{"relative", "docs", "must be an absolute path"},
		{"relative climb", "../../..", "must be an absolute path"},
		{"missing", filepath.Join(e.t.TempDir(), "missing"), "must be an existing directory"},
	}
}

// TestAttackRegisterHostilePaths (attack 2, paths): a task session names /,
// /proc/self/root, the data dir, a task folder and relative paths as
// repositories and folders through every tool that takes a local path:
// FORBIDDEN, nothing changes. The operator is refused too, with a message
// that never echoes the path.
func TestAttackRegisterHostilePaths(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	for _, pc := range hostilePaths(e, s.TaskID) {
		p := mustJSONString(pc.path)
		for _, call := range []struct{ tool, args string }{
			{"add_branch_to_task_kandev", `{"local_path":` + p + `,"base_branch":"main"}`},
			{"add_workspace_sources_kandev", `{"sources":[{"kind":"repository","local_path":` + p + `}]}`},
			{"create_task_kandev", `{"title":"t","start_agent":false,"local_path":` + p + `}`},
		} {
			refusedNoLeak(e, s.Client, call.tool, call.args, registerForbidden)
		}
		if filepath.IsAbs(pc.path) {
			refusedNoLeak(e, s.Client, "add_workspace_sources_kandev", `{"sources":[{"kind":"folder","local_path":`+p+`}]}`, registerForbidden)
		}
		op := e.wsClient(e.token, nil)
		for _, call := range []struct {
			action  kanban.Action
			payload map[string]any
		}{
			{kanban.ActionTaskRepositoryAdd, map[string]any{"task_id": s.TaskID, "local_path": pc.path, "base_branch": "main"}},
			{kanban.ActionWorkspaceSourceAdd, map[string]any{"task_id": s.TaskID, "sources": []map[string]any{{"kind": "repository", "local_path": pc.path}}}},
			{kanban.ActionTaskCreate, map[string]any{"title": "t", "start_agent": false, "local_path": pc.path}},
			{kanban.ActionRepositoryCreate, map[string]any{"local_path": pc.path}},
		} {
			before := e.fingerprint()
			err := op.Call(context.Background(), call.action, call.payload, nil)
			ke, ok := kanban.AsError(err)
			if !ok || ke.Code != kanban.CodeValidation || !strings.Contains(ke.Message, pc.operatorWant) || strings.Contains(ke.Message, pc.path) {
				t.Errorf("operator %s with %s: got %v, want VALIDATION_ERROR %q without the path", call.action, pc.name, err, pc.operatorWant)
			}
			if e.fingerprint() != before {
				t.Errorf("operator %s with %s: the refused call changed the database", call.action, pc.name)
			}
		}
	}
}

// TestAttackLinksToToken (attacks 1 and 4's neighbour): in the task folder
// under the data dir, links an agent can make to the token (a symlink, a
// symlinked directory, a hard link, the token moved in) are never read.
func TestAttackLinksToToken(t *testing.T) {
	t.Parallel()
	e, tok := attackEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	dir := taskFolder(e, s.TaskID)
	token := filepath.Join(e.cfg.DataDir, TokenFile)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("../../"+TokenFile, filepath.Join(dir, "rel")))
	must(os.Symlink(token, filepath.Join(dir, "abs")))
	must(os.Symlink("../..", filepath.Join(dir, "up")))
	must(os.Symlink(token, filepath.Join(dir, "link.csv")))
	must(os.Link(token, filepath.Join(dir, "hard")))
	must(os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("inside\n"), 0o600))
	for _, path := range []string{"rel", "abs", "up/" + TokenFile, "hard", "../../" + TokenFile, token} {
		refusedNoLeak(e, s.Client, "show_rich_output_kandev", fileBlock(path), "VALIDATION_ERROR: blocks[0].path", tok)
	}
	refusedNoLeak(e, s.Client, "show_rich_output_kandev", chartCSV(`"path":"link.csv","x_column":"a","series":[{"column":"b"}]`),
		"VALIDATION_ERROR: blocks[0].csv.path", tok)

	// The token moved into the folder keeps its identity: still refused.
	moved := filepath.Join(dir, "moved")
	must(os.Rename(token, moved))
	refusedNoLeak(e, s.Client, "show_rich_output_kandev", fileBlock("moved"), "VALIDATION_ERROR: blocks[0].path", tok)
	must(os.Rename(moved, token))

	var out kanban.Artifact
	callJSON(e, s.Client, "show_rich_output_kandev", fileBlock("notes.txt"), &out)
	if !strings.Contains(string(out.Data), "inside") {
		t.Fatalf("a plain file of the task folder: got %s", out.Data)
	}
}

// callWithin calls a tool under ctx.
func callWithin(ctx context.Context, c *client.Client, tool, args string) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = json.RawMessage(args)
	return c.CallTool(ctx, req)
}

// richGoroutines counts the goroutines inside a rich output expansion.
func richGoroutines() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "expandRichOutput")
}

// TestAttackFIFOInWorkspace (attack 4): a FIFO in the task folder (any
// agent can mkfifo) is refused at once as a file block and as a CSV; 40
// concurrent requests on one connection all return, the connection keeps
// serving, and no goroutine of theirs outlives them. Not parallel: it
// counts the process's goroutines.
func TestAttackFIFOInWorkspace(t *testing.T) {
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	dir := taskFolder(e, s.TaskID)
	for _, name := range []string{"pipe", "pipe.csv"} {
		fifo := filepath.Join(dir, name)
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		// Should a reader block in open (the defect), a writer frees it
		// before the backend shuts down, so a failure does not hang.
		t.Cleanup(func() {
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = f.Close()
			}
		})
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("fine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out kanban.Artifact
	callJSON(e, s.Client, "show_rich_output_kandev", fileBlock("ok.txt"), &out) // warm the connection
	baseline := runtime.NumGoroutine()
	before := e.fingerprint()

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	args := []string{fileBlock("pipe"), chartCSV(`"path":"pipe.csv","x_column":"a","series":[{"column":"b"}]`)}
	began := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	// 16 at a time, half the connection's 32 request slots: before the fix
	// each of them held its slot forever.
	slots := make(chan struct{}, 16)
	for i := range 40 {
		wg.Go(func() {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				errs <- fmt.Errorf("call %d never got a turn: %w", i, ctx.Err())
				return
			}
			r, err := callWithin(ctx, s.Client, "show_rich_output_kandev", args[i%2])
			switch {
			case err != nil:
				errs <- fmt.Errorf("call %d: %w", i, err)
			case !r.IsError || !strings.Contains(text(r), "must name a regular file"):
				errs <- fmt.Errorf("call %d: got error=%v %q, want a regular-file refusal", i, r.IsError, text(r))
			}
		})
	}
	wg.Wait()
	close(errs)
	t.Logf("40 FIFO requests, 16 at a time, answered in %s; goroutines %d before", time.Since(began).Round(time.Millisecond), baseline)
	for err := range errs {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a FIFO request hung: %v", err)
		}
		t.Error(err)
	}
	if e.fingerprint() != before {
		t.Fatal("the refused calls changed the database")
	}
	callJSON(e, s.Client, "show_rich_output_kandev", fileBlock("ok.txt"), &out) // the connection still serves
	waitFor(t, func() bool { return richGoroutines() == 0 && runtime.NumGoroutine() <= baseline+4 })
	t.Logf("goroutines after: %d", runtime.NumGoroutine())
}

// TestAttackPreexistingBadRepository (attack 2, rows written before the
// upgrade): repositories whose local_path is /, the data dir or relative,
// inserted directly as an older backend accepted them, are refused at use:
// rich output, diagnostic bundles and agent start never work in them.
func TestAttackPreexistingBadRepository(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	db := e.b.store.DB()
	ws := e.workspaceID()
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	for i, path := range []string{"/", e.cfg.DataDir, "."} {
		repoID := kanban.NewID()
		if _, err := db.Exec(`INSERT INTO repositories (id, workspace_id, name, local_path, remote_url, default_branch, created_at, updated_at)
			VALUES (?, ?, ?, ?, '', 'main', ?, ?)`, repoID, ws, fmt.Sprintf("old%d", i), path, now, now); err != nil {
			t.Fatal(err)
		}
		task := e.newTask(fmt.Sprintf("Old row %d", i))
		if _, err := db.Exec(`INSERT INTO task_repositories (task_id, repository_id, base_branch, checkout_branch) VALUES (?, ?, 'main', '')`,
			task.ID, repoID); err != nil {
			t.Fatal(err)
		}
		s := e.sessionMCP(kanban.ModeTask, task.ID)
		for _, p := range []string{"etc/passwd", TokenFile, "README.md"} {
			refusedNoLeak(e, s.Client, "show_rich_output_kandev", fileBlock(p), "FORBIDDEN: the task's repository local_path")
		}
		refusedNoLeak(e, s.Client, "get_diagnostic_bundle_kandev", `{"source":"backend"}`, "FORBIDDEN: the task's repository local_path")

		var spawned action.SessionSpawnOut
		e.dispatch(kanban.ActionSessionSpawn, map[string]any{"task_id": task.ID, "agent_profile_id": e.profileOf("mock-agent").ID,
			"prompt": "@say should not run"}, &spawned)
		if got := e.waitState(spawned.Session.ID, kanban.SessionFailed); !strings.Contains(got.Error, "local_path") || got.Workdir != "" {
			t.Fatalf("row %d: session error %q workdir %q, want a local_path refusal and no workdir", i, got.Error, got.Workdir)
		}
	}
	if _, err := os.Stat("/.kandev"); err == nil {
		t.Fatal("a bundle was written into /")
	}
}

// TestAttackServerPathsHidden (D4): a task session learns no absolute
// server path: its diagnostic bundle answer is workspace-relative, the
// repositories its branch tools return carry no local_path and sessions no
// working directory. A config-mode session, the operator's delegate, still
// sees local paths.
func TestAttackServerPathsHidden(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, s := workspaceTask(e, "Paths")
	var bundle map[string]any
	callJSON(e, s.Client, "get_diagnostic_bundle_kandev", `{"source":"backend"}`, &bundle)
	if _, ok := bundle["absolute_path"]; ok || strings.Contains(fmt.Sprint(bundle), ws) || strings.Contains(fmt.Sprint(bundle), e.cfg.DataDir) {
		t.Fatalf("bundle answer holds a server path: %v", bundle)
	}

	other := t.TempDir()
	var repo kanban.Repository
	e.dispatch(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{Name: "other", LocalPath: other}, &repo)
	var added map[string]any
	callJSON(e, s.Client, "add_branch_to_task_kandev", `{"repository_id":`+mustJSONString(repo.ID)+`,"base_branch":"main"}`, &added)
	if strings.Contains(fmt.Sprint(added), other) || strings.Contains(fmt.Sprint(added), "local_path") {
		t.Fatalf("add_branch_to_task answer holds a local path: %v", added)
	}
	var sources map[string]any
	callJSON(e, s.Client, "add_workspace_sources_kandev", `{"sources":[{"kind":"repository","local_path":`+mustJSONString(other)+`}]}`, &sources)
	if strings.Contains(fmt.Sprint(sources), other) {
		t.Fatalf("add_workspace_sources answer holds a local path: %v", sources)
	}

	// Sessions' working directories (as the runtime records them) are not
	// shown to a task-mode session either.
	if _, err := e.b.store.DB().Exec(`UPDATE task_sessions SET workdir = ? WHERE task_id = ?`, ws, s.TaskID); err != nil {
		t.Fatal(err)
	}
	var sessions map[string]any
	callJSON(e, s.Client, "list_task_sessions_kandev", `{"task_id":"self"}`, &sessions)
	if strings.Contains(fmt.Sprint(sessions), ws) {
		t.Fatalf("list_task_sessions answer holds a working directory: %v", sessions)
	}
	c := e.wsClient(s.Token, nil)
	var got kanban.Session
	if err := c.Call(context.Background(), kanban.ActionSessionGet, action.IDIn{ID: s.ID}, &got); err == nil && got.Workdir != "" {
		t.Fatalf("session.get over the WebSocket: got workdir %q", got.Workdir)
	}

	cfg := e.sessionMCP(kanban.ModeConfig, "")
	var list map[string]any
	callJSON(e, cfg.Client, "list_repositories_kandev", `{}`, &list)
	if !strings.Contains(fmt.Sprint(list), other) {
		t.Fatalf("a config-mode session lists no local path: %v", list)
	}
}
