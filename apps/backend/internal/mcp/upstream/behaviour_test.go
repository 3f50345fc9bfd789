package upstream_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
)

// TestZeroOutbound: invalid calls never reach the upstream server; valid
// ones all do.
func TestZeroOutbound(t *testing.T) {
	t.Parallel()
	cfg, events := stdioServer(t, "normal")
	g := newGW(t, cfg, events)
	invalid := []string{
		`{}`, `{"text":5}`, `{"text":"x","times":0}`, `{"text":"x","times":6}`, `{"text":"` + strings.Repeat("y", 101) + `"}`,
		`{"text":"x","extra":1}`, `{"text":"x","tags":{"k":"too long value"}}`, `[1]`, `"text"`, `{"text":"x","times":1.5}`,
	}
	for _, args := range invalid {
		got, isErr := g.call(context.Background(), "fx__echo", args)
		if !isErr || !strings.HasPrefix(got, "invalid arguments for fx__echo: ") {
			t.Errorf("%s: got %q, want an invalid-arguments error", args, got)
		}
	}
	if n := fixture.Calls(g.events(), ""); n != 0 {
		t.Fatalf("after %d invalid calls the fixture counted %d tools/call, want 0", len(invalid), n)
	}
	for i := range 10 {
		if got, isErr := g.call(context.Background(), "fx__echo", fmt.Sprintf(`{"text":"v%d","tags":{"a":"b"}}`, i)); isErr {
			t.Fatalf("valid call: %s", got)
		}
	}
	if n := fixture.Calls(g.events(), "echo"); n != 10 {
		t.Fatalf("after 10 valid calls the fixture counted %d, want 10", n)
	}
}

// TestCanaries: a secret-looking value in a rejected argument, in an
// open-map key and in an unknown key appears in no result, no log and
// never reaches the upstream server.
func TestCanaries(t *testing.T) {
	t.Parallel()
	cfg, events := stdioServer(t, "normal")
	g := newGW(t, cfg, events)
	const canary = "sk-live-CANARY-5f2a9c"
	calls := []struct{ tool, args string }{
		{"fx__echo", `{"text":"` + canary + strings.Repeat("x", 100) + `"}`}, // rejected value (too long)
		{"fx__echo", `{"text":"x","times":"` + canary + `"}`},                // rejected value (wrong type)
		{"fx__record", `{"values":{"` + canary + `":1}}`},                    // open-map key breaking propertyNames
		{"fx__record", `{"values":{"ok":"` + canary + `"}}`},                 // open-map value
		{"fx__echo", `{"text":"x","` + canary + `":1}`},                      // unknown key
	}
	for _, c := range calls {
		got, isErr := g.call(context.Background(), c.tool, c.args)
		if !isErr || strings.Contains(got, canary) || strings.Contains(got, "CANARY") {
			t.Errorf("%s %s: got %q, want an error without the canary", c.tool, c.args, got)
		}
	}
	if strings.Contains(g.logs.String(), "CANARY") {
		t.Fatalf("the canary reached the logs:\n%s", g.logs.String())
	}
	for _, e := range g.events() {
		if strings.Contains(string(e.Args), "CANARY") {
			t.Fatalf("the canary reached the upstream server: %+v", e)
		}
	}
}

// TestTimeoutAndCancellation: a call past the server's timeout is
// cancelled upstream; a call the caller cancels is cancelled upstream.
func TestTimeoutAndCancellation(t *testing.T) {
	t.Parallel()
	eachTransport(t, false, func(t *testing.T, cfg kanban.MCPServerConfig, events func() []fixture.Event) {
		cfg.TimeoutSeconds = 1
		g := newGW(t, cfg, events)
		got, isErr := g.call(context.Background(), "fx__sleep", `{"ms":30000}`)
		if !isErr || got != "UNAVAILABLE: upstream server fx did not answer within 1 s; the call was cancelled upstream (it may have partly run)" {
			t.Fatalf("got %q, want the timeout error", got)
		}
		waitFor(t, "the timeout's cancellation upstream", func() bool { return cancelled(g.events()) == 1 })
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			waitFor(t, "the second sleep to start", func() bool { return fixture.Calls(g.events(), "sleep") == 2 })
			cancel()
		}()
		req := callReq("fx__sleep", `{"ms":30000}`)
		if res, err := g.cl.CallTool(ctx, req); err == nil && !res.IsError {
			t.Fatalf("a cancelled call succeeded")
		}
		waitFor(t, "the caller's cancellation upstream", func() bool { return cancelled(g.events()) == 2 })
	})
}

func cancelled(events []fixture.Event) int {
	n := 0
	for _, e := range events {
		if e.Method == "notifications/cancelled" {
			n++
		}
	}
	return n
}

// TestRestart: a crashed stdio server is restarted with backoff; calls
// meanwhile fail fast with a retryable error; its tools come back.
func TestRestart(t *testing.T) {
	t.Parallel()
	cfg, events := stdioServer(t, "normal")
	g := newGW(t, cfg, events)
	changedBefore := g.changed.Load()
	got, isErr := g.call(context.Background(), "fx__crash", `{}`)
	if !isErr || !strings.HasPrefix(got, "UNAVAILABLE: upstream server fx is restarting or unreachable") {
		t.Fatalf("crash call: got %q, want the retryable unavailable error", got)
	}
	start := time.Now()
	got, isErr = g.call(context.Background(), "fx__echo", `{"text":"x"}`)
	if !isErr || !strings.HasPrefix(got, "UNAVAILABLE: ") || time.Since(start) > 5*time.Second {
		t.Fatalf("call while down: got %q after %s, want a fast retryable error", got, time.Since(start))
	}
	// Retry as an agent would: every failure meanwhile is fast and
	// retryable, and the server comes back.
	waitFor(t, "the restart", func() bool {
		start := time.Now()
		got, isErr := g.call(context.Background(), "fx__echo", `{"text":"back"}`)
		if isErr && (!strings.HasPrefix(got, "UNAVAILABLE: ") || time.Since(start) > 5*time.Second) {
			t.Fatalf("call while restarting: got %q after %s", got, time.Since(start))
		}
		return !isErr && got == "back"
	})
	if r := g.report(); r.State != kanban.UpstreamReady {
		t.Fatalf("state after restart: %+v", r)
	}
	if n := g.changed.Load() - changedBefore; n != 0 {
		t.Fatalf("a restart with the same tools sent %d list_changed, want 0", n)
	}
}

// TestListChanged: an upstream list_changed re-lists, recompiles, swaps in
// the new tools and sends one list_changed to the agent; a mode switch
// keeps the upstream tools without asking the server again.
func TestListChanged(t *testing.T) {
	t.Parallel()
	eachTransport(t, false, func(t *testing.T, cfg kanban.MCPServerConfig, events func() []fixture.Event) {
		g := newGW(t, cfg, events)
		if _, ok := g.tools()["fx__added"]; ok {
			t.Fatal("fx__added listed before grow")
		}
		before := g.changed.Load()
		if got, isErr := g.call(context.Background(), "fx__grow", `{}`); isErr {
			t.Fatal(got)
		}
		waitFor(t, "fx__added", func() bool { _, ok := g.tools()["fx__added"]; return ok })
		time.Sleep(300 * time.Millisecond) // let any extra notification arrive
		if n := g.changed.Load() - before; n != 1 {
			t.Fatalf("got %d list_changed, want 1", n)
		}
		if got, isErr := g.call(context.Background(), "fx__added", `{}`); isErr || got != "ok added" {
			t.Fatalf("new tool: got %q", got)
		}
		lists := listCount(g.events())
		if err := g.srv.SetProfile(catalogProfile(kanban.ModeConfig)); err != nil {
			t.Fatal(err)
		}
		if _, ok := g.tools()["fx__echo"]; ok {
			t.Fatal("upstream tools listed in config mode")
		}
		if err := g.srv.SetProfile(catalogProfile(kanban.ModeTask)); err != nil {
			t.Fatal(err)
		}
		if _, ok := g.tools()["fx__echo"]; !ok {
			t.Fatal("upstream tools missing after switching back to task mode")
		}
		if got := listCount(g.events()); got != lists {
			t.Fatalf("mode switches made %d tools/list requests upstream, want 0", got-lists)
		}
	})
}

func listCount(events []fixture.Event) int {
	n := 0
	for _, e := range events {
		if e.Method == "tools/list" {
			n++
		}
	}
	return n
}

// TestResultBudget: results pass through (structured content included)
// within the budget; a bigger one is a tool error; one past the message
// limit drops the stdio connection, which is then restarted.
func TestResultBudget(t *testing.T) {
	t.Parallel()
	cfg, events := stdioServer(t, "normal")
	g := newGW(t, cfg, events)
	res, err := g.cl.CallTool(context.Background(), callReq("fx__structured", `{}`))
	if err != nil || res.IsError || res.StructuredContent == nil {
		t.Fatalf("structured: got %+v, %v", res, err)
	}
	if got, isErr := g.call(context.Background(), "fx__big", `{"bytes":1000}`); isErr || len(got) != 1000 {
		t.Fatalf("small result: %d bytes, error %v", len(got), isErr)
	}
	got, isErr := g.call(context.Background(), "fx__big", `{"bytes":2000000}`)
	if !isErr || !strings.Contains(got, fmt.Sprintf("the limit is %d", upstream.MaxResultBytes)) {
		t.Fatalf("big result: got %q", got)
	}
	got, isErr = g.call(context.Background(), "fx__big", `{"bytes":34000000}`)
	if !isErr || !strings.HasPrefix(got, "UNAVAILABLE: ") {
		t.Fatalf("oversized message: got %q", got)
	}
	// The report may still say ready for a moment after the failed call,
	// before the restart begins: wait for a call to go through again.
	var last string
	waitFor(t, "the restart after the oversized message", func() bool {
		got, isErr := g.call(context.Background(), "fx__echo", `{"text":"ok"}`)
		last = got
		if isErr && !strings.HasPrefix(got, "UNAVAILABLE: ") {
			t.Fatalf("after restart: %q", got)
		}
		return !isErr && got == "ok"
	})
	if r := g.report(); r.State != kanban.UpstreamReady || r.Detail != "" {
		t.Fatalf("after restart: report %+v (last call %q)", r, last)
	}
}
