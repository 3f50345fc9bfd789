//go:build linux

package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// termTask is a task of e whose working directory is a checkout in a
// temp dir.
func termTask(t *testing.T, e *env, title string) (*kanban.Task, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	task := e.newTask(title)
	e.dispatch(kanban.ActionTaskRepositoryAdd, action.TaskBranchIn{TaskID: task.ID, LocalPath: dir, BaseBranch: "main"}, nil)
	return task, dir
}

// termClient is a terminal client of e's /terminal.
type termClient struct {
	t    *testing.T
	c    *websocket.Conn
	out  bytes.Buffer
	text []map[string]any
}

// dialTerminal connects with header and returns the connection, or the
// HTTP status of the refusal.
func dialTerminal(t *testing.T, e *env, header http.Header) (*termClient, int) {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(e.url, "http")+"/terminal", header)
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return nil, resp.StatusCode
	}
	t.Cleanup(func() { _ = c.Close() })
	return &termClient{t: t, c: c}, http.StatusSwitchingProtocols
}

func bearerHeader(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

func (tc *termClient) send(kind int, s string) {
	tc.t.Helper()
	if err := tc.c.WriteMessage(kind, []byte(s)); err != nil {
		tc.t.Fatal(err)
	}
}

// until reads until the output matches re, or a text message of type kind
// arrived (re nil), within a bounded wait.
func (tc *termClient) until(re *regexp.Regexp, kind string) []string {
	tc.t.Helper()
	_ = tc.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		if re != nil {
			if m := re.FindStringSubmatch(tc.out.String()); m != nil {
				return m
			}
		}
		for _, m := range tc.text {
			if kind != "" && m["type"] == kind {
				return nil
			}
		}
		typ, b, err := tc.c.ReadMessage()
		if err != nil {
			tc.t.Fatalf("read: %v (output %q, messages %v)", err, tc.out.String(), tc.text)
		}
		if typ == websocket.BinaryMessage {
			tc.out.Write(b)
			continue
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		tc.text = append(tc.text, m)
	}
}

// procAlive reports whether pid is a live process (not gone, not a
// zombie).
func procAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// openShell opens a terminal on task and returns the shell's and a
// background job's pids.
func openShell(t *testing.T, e *env, task *kanban.Task) (*termClient, int, int) {
	t.Helper()
	tc, status := dialTerminal(t, e, bearerHeader(e.token))
	if tc == nil {
		t.Fatalf("operator: got HTTP %d, want the upgrade", status)
	}
	tc.send(websocket.TextMessage, `{"type":"open","task_id":"`+task.ID+`","cols":80,"rows":24}`)
	tc.until(nil, "ready")
	tc.send(websocket.BinaryMessage, "sleep 1000 & echo pids=$$,$!.\n")
	m := tc.until(regexp.MustCompile(`pids=(\d+),(\d+)\.`), "")
	shell, _ := strconv.Atoi(m[1])
	bg, _ := strconv.Atoi(m[2])
	if !procAlive(shell) || !procAlive(bg) {
		t.Fatalf("shell %d and job %d: want both running", shell, bg)
	}
	return tc, shell, bg
}

func waitShellGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for procAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if procAlive(pid) {
			t.Fatalf("%s: process %d still runs", what, pid)
		}
	}
}

// TestTerminalOperatorOnly: only the operator's token opens a terminal —
// not an agent session's token, not no token, not a foreign origin.
func TestTerminalOperatorOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task, _ := termTask(t, e, "Shell task")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID, Mode: kanban.ModeConfig}, &created)
	for name, h := range map[string]http.Header{
		"no token":       {},
		"session token":  bearerHeader(created.Token),
		"wrong token":    bearerHeader("operator-test-tokeX"),
		"foreign origin": {"Authorization": {"Bearer " + e.token}, "Origin": {"http://evil.example"}},
	} {
		if tc, status := dialTerminal(t, e, h); tc != nil || (status != http.StatusUnauthorized && status != http.StatusForbidden) {
			t.Errorf("%s: got HTTP %d, want 401 or 403", name, status)
		}
	}
	if _, err := e.b.svc.WorkDir(t.Context(), action.Principal{Kind: action.Session, SessionID: created.Session.ID, TaskID: task.ID}, task.ID); kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Errorf("WorkDir as a session: got %v, want FORBIDDEN", err)
	}
	tc, _, _ := openShell(t, e, task)
	tc.send(websocket.BinaryMessage, "echo hello-$((6*7)); pwd\n")
	tc.until(regexp.MustCompile(`hello-42`), "")
}

// TestTerminalEndsWithItsTask: stopping the task kills its shell and the
// shell's jobs; an archived task opens none; the backend's shutdown
// leaves no shell behind.
func TestTerminalEndsWithItsTask(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task, _ := termTask(t, e, "Stop me")
	tc, shell, bg := openShell(t, e, task)
	e.dispatch(kanban.ActionTaskStop, action.TaskStopIn{TaskID: task.ID}, nil)
	tc.until(nil, "exit")
	waitShellGone(t, "task.stop", shell, bg)

	archived, _ := termTask(t, e, "Archive me")
	tc, shell, bg = openShell(t, e, archived)
	e.dispatch(kanban.ActionTaskArchive, action.TaskRefIn{TaskID: archived.ID}, nil)
	tc.until(nil, "exit")
	waitShellGone(t, "task.archive", shell, bg)
	again, _ := dialTerminal(t, e, bearerHeader(e.token))
	again.send(websocket.TextMessage, `{"type":"open","task_id":"`+archived.ID+`","cols":80,"rows":24}`)
	again.until(nil, "error")
	if again.text[0]["code"] != "CONFLICT" {
		t.Fatalf("archived task: got %v, want CONFLICT", again.text)
	}

	deleted, _ := termTask(t, e, "Delete me")
	_, shell, bg = openShell(t, e, deleted)
	e.dispatch(kanban.ActionTaskDelete, action.TaskRefIn{TaskID: deleted.ID}, nil)
	waitShellGone(t, "task.delete", shell, bg)

	last, _ := termTask(t, e, "Outlive me")
	_, shell, bg = openShell(t, e, last)
	e.close()
	if procAlive(shell) || procAlive(bg) {
		t.Fatalf("after shutdown: shell alive %v, job alive %v, want neither", procAlive(shell), procAlive(bg))
	}
}

// TestFilesOverWebSocketOperatorOnly: over the real WebSocket API, the
// operator reads the task's files; the task's own agent session (config
// mode, the operator's delegate) is refused, its directory unread.
func TestFilesOverWebSocketOperatorOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task, dir := termTask(t, e, "Files task")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("operator only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID, Mode: kanban.ModeConfig}, &created)
	wsURL := "ws" + strings.TrimPrefix(e.url, "http") + "/ws"
	op, err := ws.Dial(t.Context(), ws.ClientConfig{URL: wsURL, Token: e.token})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = op.Close() }()
	if out := e.cli("files", "read", "--task", task.ID, "--path", "notes.txt"); out != "operator only\n" {
		t.Fatalf("kandev files read: got %q, want the file's text", out)
	}
	if out := e.cli("files", "list", "--task", task.ID); !strings.Contains(out, `"name": "notes.txt"`) {
		t.Fatalf("kandev files list: got %q, want notes.txt", out)
	}
	var f action.FilesReadOut
	if err := op.Call(t.Context(), kanban.ActionTaskFilesRead, action.FilesReadIn{TaskID: task.ID, Path: "notes.txt"}, &f); err != nil || f.Content != "operator only\n" {
		t.Fatalf("operator: got %+v, %v, want the file", f, err)
	}
	agent, err := ws.Dial(t.Context(), ws.ClientConfig{URL: wsURL, Token: created.Token})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = agent.Close() }()
	for name, in := range map[kanban.Action]any{
		kanban.ActionTaskFilesRead: action.FilesReadIn{TaskID: task.ID, Path: "notes.txt"},
		kanban.ActionTaskFilesList: action.FilesListIn{TaskID: task.ID},
	} {
		var out json.RawMessage
		err := agent.Call(t.Context(), name, in, &out)
		if kanban.ErrorCode(err) != kanban.CodeForbidden || strings.Contains(string(out), "operator only") {
			t.Errorf("%s as the task's session: got %s, %v, want FORBIDDEN", name, out, err)
		}
	}
}

// TestTerminalEndsAfterTheGracePeriod: a shell whose client went away
// and did not come back within the grace period is ended, with its jobs.
func TestTerminalEndsAfterTheGracePeriod(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *Config) { c.Terminal.Grace = 300 * time.Millisecond })
	task, _ := termTask(t, e, "Leave me")
	tc, shell, bg := openShell(t, e, task)
	_ = tc.c.Close()
	waitShellGone(t, "disconnect", shell, bg)
	waitFor(t, func() bool { return e.b.term.Count(task.ID) == 0 }) // reaped and removed
}

// TestTerminalBoardSession: a signed-in board opens a terminal from its
// own origin only; signing out closes the connection (the shell is left
// to its grace period), and the ended cookie opens none.
func TestTerminalBoardSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task, _ := termTask(t, e, "Board shell")
	cookie := boardCookie(t, e)
	if tc, status := dialTerminal(t, e, http.Header{"Cookie": {cookie}, "Origin": {"http://localhost:1"}}); tc != nil || status != http.StatusForbidden {
		t.Fatalf("another loopback origin: got HTTP %d, want 403", status)
	}
	tc, status := dialTerminal(t, e, http.Header{"Cookie": {cookie}, "Origin": {e.url}})
	if tc == nil {
		t.Fatalf("the board's origin: got HTTP %d, want the upgrade", status)
	}
	tc.send(websocket.TextMessage, `{"type":"open","task_id":"`+task.ID+`","cols":80,"rows":24}`)
	tc.until(nil, "ready")
	if res := boardReq(t, "POST", e.url+"/auth/sign-out", e.url, cookie, ""); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: got %d, want 303", res.StatusCode)
	}
	tc.until(nil, "error")
	if m := tc.text[len(tc.text)-1]; m["code"] != "UNAUTHORIZED" {
		t.Fatalf("after sign-out: got %v, want the connection ended", m)
	}
	if again, status := dialTerminal(t, e, http.Header{"Cookie": {cookie}, "Origin": {e.url}}); again != nil || status != http.StatusUnauthorized {
		t.Fatalf("the ended cookie: got HTTP %d, want 401", status)
	}
}
