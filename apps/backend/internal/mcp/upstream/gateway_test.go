package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
)

// TestMain serves the fixture when this binary is launched as a stdio server.
func TestMain(m *testing.M) {
	fixture.MainIfAsked(context.Background())
	os.Exit(m.Run())
}

// eachTransport runs fn as a parallel subtest with the fixture over stdio
// and over HTTP.
func eachTransport(t *testing.T, hostile bool, fn func(t *testing.T, cfg kanban.MCPServerConfig, events func() []fixture.Event)) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			if tr == "http" {
				cfg, events := httpServer(t, hostile)
				fn(t, cfg, events)
				return
			}
			mode := "normal"
			if hostile {
				mode = "hostile"
			}
			cfg, events := stdioServer(t, mode)
			fn(t, cfg, events)
		})
	}
}

// noBackend refuses every built-in tool call: these tests call upstream tools only.
type noBackend struct{}

func (noBackend) Call(context.Context, kanban.Action, any, any) error {
	return errors.New("no backend in this test")
}

// syncBuf collects logs.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// gw is a session MCP server with one proxied fixture server "fx" and a
// real MCP client session to it.
type gw struct {
	t       *testing.T
	srv     *toolserver.Server
	mgr     *upstream.Manager
	cl      *client.Client
	logs    *syncBuf
	events  func() []fixture.Event
	changed atomic.Int32 // list_changed notifications the client received
	reports atomic.Pointer[[]kanban.UpstreamServer]
}

// stdioServer configures the fixture as a child process (this test binary).
func stdioServer(t *testing.T, mode string) (kanban.MCPServerConfig, func() []fixture.Event) {
	log := filepath.Join(t.TempDir(), "fixture.log")
	cfg := kanban.MCPServerConfig{Type: "stdio", Command: os.Args[0], Args: []string{"-test.run=^$"}, Proxy: true,
		Env: map[string]string{"UPSTREAM_FIXTURE": mode, "UPSTREAM_FIXTURE_LOG": log}}
	return cfg, func() []fixture.Event { return fixture.ReadLog(log) }
}

// httpServer serves the fixture over Streamable HTTP on 127.0.0.1:0.
func httpServer(t *testing.T, hostile bool) (kanban.MCPServerConfig, func() []fixture.Event) {
	f := fixture.New(hostile, "")
	hs := httptest.NewServer(f.Handler())
	t.Cleanup(hs.Close)
	return kanban.MCPServerConfig{Type: "http", URL: hs.URL + "/mcp", Proxy: true, Headers: map[string]string{"Authorization": "Bearer fixture"}}, f.Events
}

func newGW(t *testing.T, cfg kanban.MCPServerConfig, events func() []fixture.Event) *gw {
	t.Helper()
	compiled, err := toolserver.Compile()
	if err != nil {
		t.Fatal(err)
	}
	g := &gw{t: t, logs: &syncBuf{}, events: events}
	log := slog.New(slog.NewTextHandler(g.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g.srv, err = toolserver.New(toolserver.Config{Compiled: compiled, Backend: noBackend{}, Profile: catalog.DefaultProfile(kanban.ModeTask), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	g.mgr = upstream.Start(context.Background(), upstream.Config{
		Servers: map[string]kanban.MCPServerConfig{"fx": cfg}, Logger: log,
		Tools: func(tools []toolserver.UpstreamTool) {
			if err := g.srv.SetUpstream(tools); err != nil {
				t.Errorf("SetUpstream: %v", err)
			}
		},
		Report: func(_ context.Context, s []kanban.UpstreamServer) { g.reports.Store(&s) },
	})
	t.Cleanup(g.mgr.Close)
	g.mgr.WaitFirst(context.Background(), 2*time.Minute) // the hostile list is slow under -race
	g.cl, err = client.NewInProcessClient(g.srv.MCP())
	if err != nil {
		t.Fatal(err)
	}
	g.cl.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			g.changed.Add(1)
		}
	})
	if err := g.cl.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "gateway-test", Version: "1"}
	if _, err := g.cl.Initialize(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.cl.Close() })
	return g
}

// call calls a tool with raw JSON arguments and returns the result's text.
func (g *gw) call(ctx context.Context, name, args string) (string, bool) {
	g.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = json.RawMessage(args)
	res, err := g.cl.CallTool(ctx, req)
	if err != nil {
		g.t.Fatalf("call %s: %v", name, err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String(), res.IsError
}

func (g *gw) tools() map[string]mcp.Tool {
	g.t.Helper()
	res, err := g.cl.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		g.t.Fatal(err)
	}
	out := map[string]mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// report is the server's current state, as the manager reports it.
func (g *gw) report() kanban.UpstreamServer {
	g.t.Helper()
	s := g.mgr.Servers()
	if len(s) != 1 {
		g.t.Fatalf("got %d servers, want 1", len(s))
	}
	return s[0]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func callReq(name, args string) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = json.RawMessage(args)
	return req
}

func catalogProfile(m kanban.Mode) catalog.Profile { return catalog.DefaultProfile(m) }
