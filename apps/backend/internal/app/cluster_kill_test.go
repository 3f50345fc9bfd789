package app

import (
	"context"
	"os"
	"os/exec"
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
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
)

// serveProc is one `kandev serve` process of a test.
type serveProc struct {
	cmd  *exec.Cmd
	dir  string
	e    *env
	mcp  *client.Client
	logs *syncBuffer
}

// startServe runs the real binary on database u with a short lease and
// the shared operator token, and connects to its external MCP endpoint.
func startServe(t *testing.T, u string) *serveProc {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(kandevBinary(t), "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--database", u, "--lease-ttl", "1s")
	cmd.Env = append(os.Environ(), "KANDEV_TOKEN=operator-test-token")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, dir: dir, logs: &syncBuffer{}}
	cmd.Stderr = p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("kandev serve (%s) stderr:\n%s", dir, p.logs.String())
		}
	})
	p.e = &env{t: t, url: "http://" + readServeAddr(t, stdout), token: "operator-test-token"}
	if p.mcp, err = client.NewStreamableHttpClient(p.e.url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + p.e.token})); err != nil {
		t.Fatal(err)
	}
	p.e.initialize(p.mcp)
	return p
}

// TestBackendKilledSessionsTakenOver: backend A, killed with SIGKILL
// while its agent's session is live, stops renewing its lease; backend B
// takes the session over within the lease's bound, resumes the agent
// (ACP session/load) and delivers the next prompt to it.
func TestBackendKilledSessionsTakenOver(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks processes through /proc")
	}
	t.Parallel()
	u := pgtest.Database(t)
	a := startServe(t, u)
	b := startServe(t, u)
	var created action.TaskCreateOut
	a.e.decode(a.e.call(a.mcp, "create_task_kandev", mustJSON(t, map[string]any{"title": "Survivor",
		"agent_profile_id": mockProfile(t, a), "prompt": "@say before the crash"})), &created)
	waitConversation(t, b.e, b.mcp, created.Task.ID, "before the crash")
	if len(agentProcesses(t, a.dir)) == 0 {
		t.Fatal("no agent process runs for backend A")
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	waitStatus(t, b, created.Task.ID, "Resumed the agent's session")
	took := time.Since(killed)
	// The lease lasts 1s and B renews (and looks for orphans) every 200ms.
	if took > 10*time.Second {
		t.Fatalf("backend B took the session over %s after A died, want within the lease's bound", took)
	}
	t.Logf("session taken over %s after its backend was killed (lease 1s)", took.Round(time.Millisecond))
	_, m := b.e.scrape(b.e.token)
	if n := sample(m, "kandev_agent_sessions_taken_over_total"); n < 1 {
		t.Errorf("backend B counted %v sessions taken over, want at least 1", n)
	}
	if ttl := sample(m, "kandev_cluster_lease_ttl_seconds"); ttl != 1 {
		t.Errorf("lease TTL gauge %v, want 1 (--lease-ttl 1s)", ttl)
	}
	if age := sample(m, "kandev_cluster_lease_age_seconds"); age <= 0 || age >= 5 {
		t.Errorf("backend B's lease is %vs old, want a live lease (renewed every 200ms)", age)
	}
	if _, ok := m["kandev_cluster_lease_renewal_failures_total"]; !ok {
		t.Error("no lease renewal failures counter on a backend on PostgreSQL")
	}
	msg := exec.Command(kandevBinary(t), "session", "message", "--session", created.SessionID, "--message", "@say after the crash",
		"--backend", b.e.url)
	msg.Env = append(os.Environ(), "KANDEV_TOKEN=operator-test-token")
	out, err := msg.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "delivered") {
		t.Fatalf("session message on B: %v: %s", err, out)
	}
	waitConversation(t, b.e, b.mcp, created.Task.ID, "after the crash")
	if len(agentProcesses(t, b.dir)) == 0 {
		t.Fatal("no agent process runs for backend B after the takeover")
	}
	waitGone(t, a.dir) // A's agent saw its stdin close and exited
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Wait(); err != nil {
		t.Fatalf("backend B exited: %v", err)
	}
	waitGone(t, b.dir)
}

// mockProfile is the default profile of the mock agent on p.
func mockProfile(t *testing.T, p *serveProc) string {
	t.Helper()
	var profiles kanban.List[kanban.AgentProfile]
	p.e.decode(p.e.call(p.mcp, "list_agent_profiles_kandev", `{}`), &profiles)
	var agents kanban.List[kanban.Agent]
	p.e.decode(p.e.call(p.mcp, "list_agents_kandev", `{}`), &agents)
	for _, ag := range agents.Items {
		for _, pr := range profiles.Items {
			if ag.Name == "mock-agent" && pr.AgentID == ag.ID && pr.IsDefault {
				return pr.ID
			}
		}
	}
	t.Fatal("no mock-agent profile")
	return ""
}

// waitStatus waits until the task's conversation has a status message
// containing want.
func waitStatus(t *testing.T, p *serveProc, taskID, want string) {
	t.Helper()
	deadline := time.Now().Add(agentWait)
	re := regexp.MustCompile(regexp.QuoteMeta(want))
	for time.Now().Before(deadline) {
		var l kanban.List[kanban.Message]
		p.e.decode(p.e.call(p.mcp, "get_task_conversation_kandev", mustJSON(t, map[string]any{"task_id": taskID, "limit": 200})), &l)
		for _, m := range l.Items {
			if m.Type == "status" && re.MatchString(m.Content) {
				return
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("no status message %q", want)
}

// waitGone waits until no process runs in dir.
func waitGone(t *testing.T, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentWait)
	defer cancel()
	for len(agentProcesses(t, dir)) > 0 {
		if ctx.Err() != nil {
			t.Fatalf("processes still run in %s: %v", dir, agentProcesses(t, dir))
		}
		time.Sleep(25 * time.Millisecond)
	}
}
