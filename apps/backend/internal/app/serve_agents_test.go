package app

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestServeBinaryRunsAgents drives the real `kandev serve` as a user would
// after `make run`: a task created over the external MCP endpoint with the
// mock agent runs, the CLI steers and stops it, and SIGTERM leaves no
// agent process behind.
func TestServeBinaryRunsAgents(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks processes through /proc")
	}
	t.Parallel()
	bin := kandevBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serve, stdout := startServeBinary(ctx, t, bin, dir)
	addr := readServeAddr(t, stdout)
	tok, err := ReadOperatorToken(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, url: "http://" + addr, token: tok}
	c, err := client.NewStreamableHttpClient(e.url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + tok}))
	if err != nil {
		t.Fatal(err)
	}
	e.initialize(c)

	mock := mockProfileOverMCP(e, c)
	var created action.TaskCreateOut
	e.decode(e.call(c, "create_task_kandev", mustJSON(t, map[string]any{"title": "Binary task", "agent_profile_id": mock,
		"prompt": "@tool list_tasks_kandev {\"limit\":1}\n@say first turn"})), &created)
	waitConversation(t, e, c, created.Task.ID, "first turn")

	run := kandevCLI(t, bin, e.url, dir)
	if out := run("session", "message", "--session", created.SessionID, "--message", "@say from the CLI"); !strings.Contains(out, "delivered") {
		t.Fatalf("session message: %s", out)
	}
	waitConversation(t, e, c, created.Task.ID, "from the CLI")
	if len(agentProcesses(t, dir)) == 0 {
		t.Fatal("no agent process runs in the data dir")
	}
	if out := run("session", "stop", "--session", created.SessionID, "--reason", "done here"); !strings.Contains(out, "CANCELLED") {
		t.Fatalf("session stop: %s", out)
	}
	out := run("session", "start", "--task", created.Task.ID, "--prompt", "@sleep 60000")
	sid := regexp.MustCompile(`session_id=(\S+)`).FindStringSubmatch(out)
	if sid == nil {
		t.Fatalf("session start: %s", out)
	}
	deadline := time.Now().Add(agentWait)
	for len(agentProcesses(t, dir)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := serve.Wait(); err != nil {
		t.Fatalf("serve exited: %v", err)
	}
	if left := agentProcesses(t, dir); len(left) > 0 {
		t.Fatalf("agent processes left after shutdown: %v", left)
	}
}

// startServeBinary starts `kandev serve` on the data dir dir with a fresh
// operator token, killed at the test's end (its stderr logged if the test
// failed), and returns it with its stdout.
func startServeBinary(ctx context.Context, t *testing.T, bin, dir string) (*exec.Cmd, io.Reader) {
	t.Helper()
	serve := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	serve.Env = append(os.Environ(), "KANDEV_TOKEN=")
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	serve.Stderr = logs
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kandev serve stderr:\n%s", logs.String())
		}
	})
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	return serve, stdout
}

// kandevCLI runs the kandev binary bin's commands against the backend at
// url on the data dir dir, failing the test if one fails.
func kandevCLI(t *testing.T, bin, url, dir string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--backend", url, "--data-dir", dir)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kandev %v: %v: %s", args, err, out)
		}
		return string(out)
	}
}

// mockProfileOverMCP is the mock agent's profile, found over the MCP
// client c.
func mockProfileOverMCP(e *env, c *client.Client) string {
	t := e.t
	t.Helper()
	var agents kanban.List[kanban.Agent]
	e.decode(e.call(c, "list_agents_kandev", `{}`), &agents)
	var profiles kanban.List[kanban.AgentProfile]
	e.decode(e.call(c, "list_agent_profiles_kandev", `{}`), &profiles)
	mock := ""
	for _, a := range agents.Items {
		for _, p := range profiles.Items {
			if a.Name == "mock-agent" && p.AgentID == a.ID {
				mock = p.ID
			}
		}
	}
	if mock == "" {
		t.Fatal("no mock-agent profile")
	}
	return mock
}

// readServeAddr reads the listen address from kandev serve's banner.
func readServeAddr(t *testing.T, stdout interface{ Read([]byte) (int, error) }) string {
	t.Helper()
	sc := bufio.NewScanner(stdout)
	re := regexp.MustCompile(`serving on http://(\S+)`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			return m[1]
		}
	}
	t.Fatal("kandev serve printed no address")
	return ""
}

// waitConversation waits for a message containing want over MCP.
func waitConversation(t *testing.T, e *env, c *client.Client, taskID, want string) {
	t.Helper()
	deadline := time.Now().Add(agentWait)
	for time.Now().Before(deadline) {
		var l kanban.List[kanban.Message]
		e.decode(e.call(c, "get_task_conversation_kandev", mustJSON(t, map[string]any{"task_id": taskID, "limit": 200})), &l)
		for _, m := range l.Items {
			if m.Type == "message" && strings.Contains(m.Content, want) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no agent message %q", want)
}

// agentProcesses lists the pids of processes whose working directory is
// inside dir (the agents and their MCP servers).
func agentProcesses(t *testing.T, dir string) []string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, en := range entries {
		cwd, err := os.Readlink(filepath.Join("/proc", en.Name(), "cwd"))
		if err == nil && strings.HasPrefix(cwd, abs+string(os.PathSeparator)) {
			if st, err := os.ReadFile(filepath.Join("/proc", en.Name(), "stat")); err == nil && !zombie(st) {
				out = append(out, en.Name())
			}
		}
	}
	return out
}

// zombie reports whether a /proc/PID/stat line is of an exited process.
func zombie(stat []byte) bool {
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
