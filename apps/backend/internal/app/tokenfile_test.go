//go:build linux

package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// proc is one process of this machine the test can read.
type proc struct {
	pid     string
	args    []string
	environ []byte
}

// readProcs returns every process whose command line the test can read,
// with its environment when readable (the same user's processes).
func readProcs(t *testing.T) []proc {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []proc
	for _, d := range dirs {
		if strings.Trim(d.Name(), "0123456789") != "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue // gone, or a kernel thread
		}
		env, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		out = append(out, proc{pid: d.Name(), args: strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), environ: env})
	}
	return out
}

// argAfter is the argument after flag in args ("" when absent).
func argAfter(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// TestSessionTokenNotOnCommandLine: a launched mock agent (the real
// binary, through the real runtime) starts its session's kandev mcp from
// the session/new it was given; that process's command line names the
// session's token file (0600, in a 0700 directory under the data dir) and
// no process's command line or environment holds the token, yet kandev mcp
// authenticates (the agent's tool call completes). The session's tools
// cannot read the file, by a climbing path, a hard link or the file moved
// into the workspace, nor register its directory. When the session is
// stopped the file is gone; a file a previous process left is removed at
// start.
func TestSessionTokenNotOnCommandLine(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t, func(c *Config) {
		stale := filepath.Join(c.DataDir, agent.TokenDir)
		if err := os.MkdirAll(stale, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stale, "stale-session"), []byte("stale-token\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	dir := filepath.Join(e.cfg.DataDir, agent.TokenDir)
	if _, err := os.Stat(filepath.Join(dir, "stale-session")); !os.IsNotExist(err) {
		t.Fatalf("the stale token file is still there after start: %v", err)
	}
	task, sid := e.startMock("Token file task", "@tool list_tasks_kandev {}\n@say listed", nil)
	tc := e.waitMessage(task.ID, "tool_call", "list_tasks_kandev")
	for !strings.Contains(tc.Content, `"status":"completed"`) && !strings.Contains(tc.Content, `"status":"failed"`) {
		tc = e.waitMessage(task.ID, "tool_call", `"status":"`)
	}
	if !strings.Contains(tc.Content, `"status":"completed"`) || !strings.Contains(tc.Content, "Token file task") {
		t.Fatalf("the agent's kandev mcp did not authenticate: %s", tc.Content)
	}
	sess := e.waitState(sid, kanban.SessionIdle)

	path := filepath.Join(dir, sid)
	tok := tokenFileOf(t, path, dir)
	checkProcs(t, sid, path, tok)

	// The file authenticates kandev mcp started from it (the real binary).
	c, err := client.NewStdioMCPClient(kandevBinary(t), []string{}, "mcp", "--backend", e.url, "--session", sid, "--token-file", path)
	if err != nil {
		t.Fatalf("start kandev mcp: %v", err)
	}
	e.initialize(c)
	tokenFileUnreadable(e, c, sess.Workdir, path, tok)
	_ = c.Close()

	e.dispatch(kanban.ActionSessionStop, action.SessionStopIn{ID: sid}, nil)
	e.waitNoAgents()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the token file is still there after the session stopped: %v", err)
	}
	for _, p := range readProcs(t) {
		if slices.Contains(p.args, sid) {
			t.Fatalf("process %s of the session still runs after stop: %q", p.pid, p.args)
		}
	}
	if bytes.Contains([]byte(e.logs.String()), []byte(tok)) {
		t.Fatal("the server log holds the session token")
	}
}

// tokenFileOf checks the token file's and its directory's modes and
// returns the token.
func tokenFileOf(t *testing.T, path, dir string) string {
	t.Helper()
	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Fatalf("%s: mode %v, want %v", filepath.Base(p), st.Mode().Perm(), want)
		}
	}
	b, err := os.ReadFile(path) //nolint:gosec // the test's own data dir
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 32 {
		t.Fatalf("the token file holds %d characters", len(tok))
	}
	return tok
}

// checkProcs finds the session's kandev mcp among the machine's processes
// (its command line names the session and the token file) and checks that
// no process's command line or environment holds the token.
func checkProcs(t *testing.T, sid, path, tok string) {
	t.Helper()
	want, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, p := range readProcs(t) {
		if slices.ContainsFunc(p.args, func(a string) bool { return strings.Contains(a, tok) }) {
			t.Fatalf("process %s has the session token on its command line", p.pid)
		}
		if bytes.Contains(p.environ, []byte(tok)) {
			t.Fatalf("process %s has the session token in its environment", p.pid)
		}
		if !slices.Contains(p.args, "mcp") || argAfter(p.args, "--session") != sid {
			continue
		}
		st, err := os.Stat(argAfter(p.args, "--token-file"))
		if err != nil || !os.SameFile(st, want) {
			t.Fatalf("the session's kandev mcp (pid %s) was not given its token file: %q", p.pid, p.args)
		}
		if bytes.Contains(p.environ, []byte("KANDEV_SESSION_TOKEN=")) {
			t.Fatalf("the session's kandev mcp (pid %s) has KANDEV_SESSION_TOKEN in its environment", p.pid)
		}
		found++
	}
	if found != 1 {
		t.Fatalf("found %d kandev mcp processes of the session, want 1", found)
	}
}

// tokenFileUnreadable: the session's tools refuse the token file by every
// name an agent can give it from its workspace, and its directory as a
// source; no answer holds the token or its path.
func tokenFileUnreadable(e *env, c *client.Client, workdir, path, tok string) {
	e.t.Helper()
	sid := filepath.Base(path)
	rel, err := filepath.Rel(workdir, path)
	if err != nil {
		e.t.Fatal(err)
	}
	hard, moved := filepath.Join(workdir, "hard"), filepath.Join(workdir, "moved")
	if err := os.Link(path, hard); err != nil {
		e.t.Fatal(err)
	}
	for _, p := range []string{rel, "../../" + agent.TokenDir + "/" + sid, path, "hard"} {
		refusedNoLeak(e, c, "show_rich_output_kandev", fileBlock(p), "VALIDATION_ERROR: blocks[0].path", tok, path)
	}
	if err := os.Remove(hard); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(path, moved); err != nil {
		e.t.Fatal(err)
	}
	refusedNoLeak(e, c, "show_rich_output_kandev", fileBlock("moved"), "is a file Kandev protects", tok, path)
	if err := os.Rename(moved, path); err != nil {
		e.t.Fatal(err)
	}
	src, _ := json.Marshal(map[string]any{"sources": []map[string]any{{"kind": "folder", "local_path": filepath.Dir(path)}}})
	refusedNoLeak(e, c, "add_workspace_sources_kandev", string(src), registerForbidden, tok, path)
	if r := e.call(c, "list_tasks_kandev", "{}"); r.IsError {
		e.t.Fatalf("kandev mcp started from the token file: list_tasks_kandev failed: %s", text(r))
	}
}
