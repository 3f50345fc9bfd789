package app

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
)

// proxiedSession creates a session whose agent profile proxies the
// fixture (this test binary, launched by kandev mcp) as server "fx", with
// the given call timeout, and returns the session and the fixture's log.
func (e *env) proxiedSession(mode string, timeout int) (*action.SessionCreateOut, string) {
	e.t.Helper()
	task := e.newTask("Proxy task")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, &created)
	log := filepath.Join(e.t.TempDir(), "fixture.log")
	servers := map[string]kanban.MCPServerConfig{
		"fx": {Type: "stdio", Command: os.Args[0], Args: []string{"-test.run=^$"}, Proxy: true, TimeoutSeconds: timeout,
			Env: map[string]string{"UPSTREAM_FIXTURE": mode, "UPSTREAM_FIXTURE_LOG": log}},
		"direct": {Type: "stdio", Command: "/bin/false"}, // not proxied: handed to the agent, never started by kandev mcp
	}
	var cfg kanban.MCPConfig
	e.dispatch(kanban.ActionMCPConfigUpdate, action.MCPConfigUpdateIn{AgentProfileID: created.Session.AgentProfileID, Servers: servers}, &cfg)
	return &created, log
}

// TestProxiedServerThroughKandevMCP drives the real `kandev mcp` binary
// over stdio with mcp-go's client: the proxied fixture's tools are served
// next to the built-in ones, bad calls never leave Kandev, timeouts and
// cancellations reach the fixture, a crash is survived, a list change
// arrives as one list_changed, and the operator sees refused tools over the
// WebSocket API and the CLI.
func TestProxiedServerThroughKandevMCP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bin := kandevBinary(t)
	created, log := e.proxiedSession("hostile", 2)
	c, err := client.NewStdioMCPClient(bin, []string{"KANDEV_SESSION_TOKEN=" + created.Token}, "mcp", "--backend", e.url, "--session", created.Session.ID)
	if err != nil {
		t.Fatalf("start kandev mcp: %v", err)
	}
	var changed atomic.Int32
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed.Add(1)
		}
	})
	e.initialize(c)
	names := toolNames(t, c)
	if !names["fx__echo"] || !names["create_task_kandev"] || names["fx__bomb_allof_defs"] || names["fx__long_property_name"] || names["direct__echo"] {
		t.Fatalf("tools: got %v, want fx__echo beside the built-in tools and no refused or direct-server tool", names)
	}
	events := func() []fixture.Event { return fixture.ReadLog(log) }

	checkBadCallsStayInKandev(e, c, events)

	// Timeout (2 s) and the caller's cancellation both reach the fixture.
	if r := e.call(c, "fx__sleep", `{"ms":20000}`); !r.IsError || !strings.Contains(text(r), "did not answer within 2 s") {
		t.Fatalf("timeout: %q", text(r))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "fx__sleep", map[string]any{"ms": 20000}
	_, _ = c.CallTool(ctx, req)
	cancel()
	waitFor(t, func() bool { return countMethod(events(), "notifications/cancelled") == 2 })

	// list_changed: one notification, the new tool served.
	before := changed.Load()
	if r := e.call(c, "fx__grow", `{}`); r.IsError {
		t.Fatal(text(r))
	}
	waitFor(t, func() bool { return toolNames(t, c)["fx__added"] })
	time.Sleep(300 * time.Millisecond)
	if n := changed.Load() - before; n != 1 {
		t.Fatalf("got %d list_changed, want 1", n)
	}

	// Crash: retryable errors meanwhile, then served again.
	_ = e.call(c, "fx__crash", `{}`)
	waitFor(t, func() bool {
		r := e.call(c, "fx__echo", `{"text":"back"}`)
		if r.IsError && !strings.HasPrefix(text(r), "UNAVAILABLE: ") {
			t.Fatalf("while restarting: %q", text(r))
		}
		return !r.IsError
	})

	checkOperatorSeesRefused(e, bin, created.Session.ID)
	_ = c.Close()
	checkBridgeReportedUpstream(e)
	if strings.Contains(e.logs.String(), "CANARY") {
		t.Fatal("the canary reached the backend's log")
	}
}

// checkBridgeReportedUpstream: the bridge reports its calls when it
// stops: the four refused by the fixture's schema (which never left it),
// the timeout, and the answered ones.
func checkBridgeReportedUpstream(e *env) {
	e.t.Helper()
	waitFor(e.t, func() bool {
		_, m := e.scrape(e.token)
		return sample(m, "kandev_upstream_calls_total", "outcome", "invalid_arguments", "where", "bridge") == 4 &&
			sample(m, "kandev_upstream_calls_total", "outcome", "timeout", "where", "bridge") == 1 &&
			sample(m, "kandev_upstream_calls_total", "outcome", "ok", "where", "bridge") >= 3 &&
			sample(m, "kandev_bridge_tool_calls_total", "outcome", "refused", "tool", "upstream") >= 4
	})
}

// checkBadCallsStayInKandev: bad calls of the proxied echo are refused in
// Kandev, with zero outbound calls; a good one is answered.
func checkBadCallsStayInKandev(e *env, c *client.Client, events func() []fixture.Event) {
	t := e.t
	t.Helper()
	for _, args := range []string{`{}`, `{"text":1}`, `{"text":"x","sk-live-CANARY":1}`, `{"text":"x","times":9}`} {
		if r := e.call(c, "fx__echo", args); !r.IsError || !strings.HasPrefix(text(r), "invalid arguments for fx__echo: ") {
			t.Fatalf("%s: got %q", args, text(r))
		}
	}
	if n := fixture.Calls(events(), ""); n != 0 {
		t.Fatalf("fixture counted %d calls after refused ones, want 0", n)
	}
	if r := e.call(c, "fx__echo", `{"text":"hi"}`); r.IsError || text(r) != "hi" {
		t.Fatalf("echo: %q", text(r))
	}
}

// checkOperatorSeesRefused: the operator sees the session's refused tools
// and its upstream server over the WebSocket API and the CLI.
func checkOperatorSeesRefused(e *env, bin, sessionID string) {
	t := e.t
	t.Helper()
	var page kanban.List[kanban.RefusedTool]
	waitFor(t, func() bool {
		e.dispatch(kanban.ActionUpstreamRefused, action.UpstreamRefusedIn{SessionID: sessionID, Server: "fx"}, &page)
		return len(page.Items) == countRefused()
	})
	byTool := map[string]string{}
	for _, r := range page.Items {
		byTool[r.Tool] = r.Limit
	}
	if byTool["bomb_allof_defs"] != "visits" || byTool["ref_chain_10000"] != "ref_hops" || byTool["schema_20mb"] != "bytes" ||
		byTool["long_property_name"] != "over_tool_budget" {
		t.Fatalf("refused over the API: %v", byTool)
	}
	var servers kanban.List[kanban.UpstreamServer]
	e.dispatch(kanban.ActionUpstreamList, action.UpstreamListIn{SessionID: sessionID}, &servers)
	if len(servers.Items) != 1 || servers.Items[0].Name != "fx" || servers.Items[0].State != kanban.UpstreamReady {
		t.Fatalf("servers over the API: %+v", servers.Items)
	}
	var out, stderr bytes.Buffer
	cli := exec.Command(bin, "session", "upstreams", "--session", sessionID, "--backend", e.url)
	cli.Env, cli.Stdout, cli.Stderr = append(os.Environ(), "KANDEV_TOKEN="+e.token), &out, &stderr
	if err := cli.Run(); err != nil {
		t.Fatalf("kandev session upstreams: %v: %s", err, stderr.String())
	}
	for _, want := range []string{"fx      stdio  ready", "fx__bomb_allof_defs", "visits", `fx__evil\x1b[2Jname\u202e`,
		"fx__long_property_name", "over_tool_budget"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("CLI output lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("kandev session upstreams:\n%s", out.String())
}

func countMethod(events []fixture.Event, method string) int {
	n := 0
	for _, ev := range events {
		if ev.Method == method {
			n++
		}
	}
	return n
}

func countRefused() int {
	n := 0
	for _, c := range fixture.Hostile() {
		if c.Gateway() != "" {
			n++
		}
	}
	return n
}
