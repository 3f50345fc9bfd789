package toolserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// TestSessionsBounded is the regression test for Streamable HTTP sessions
// that clients never close: each one used to stay registered forever
// (about 11 KB each; 250 MiB after 20,000). Past the cap the least
// recently used is dropped, freeing mcp-go's state for it, and a dropped
// session's id keeps working. The reliability suite's sessions scenario
// checks the server's memory end to end.
func TestSessionsBounded(t *testing.T) {
	s, err := New(Config{Compiled: mustCompile(t), Profile: catalog.DefaultProfile(kanban.ModeExternal), Backend: &recorder{},
		Sessions: SessionLimits{Max: 5}})
	if err != nil {
		t.Fatal(err)
	}
	var live atomic.Int64
	s.MCP().GetHooks().AddOnRegisterSession(func(context.Context, mcpserver.ClientSession) { live.Add(1) })
	s.MCP().GetHooks().AddOnUnregisterSession(func(context.Context, mcpserver.ClientSession) { live.Add(-1) })
	h := s.HTTP(t.Context(), "/mcp", "", "")
	srv := httptest.NewServer(h.Streamable)
	defer srv.Close()
	defer h.Shutdown(context.Background())
	var first string
	for i := range 50 {
		id, _ := post(t, srv.URL+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if i == 0 {
			first = id
		}
		// The newest sessions are in use, so they are the ones kept.
		post(t, srv.URL+"/mcp", id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}
	if n := h.Sessions(); n != 5 {
		t.Fatalf("got %d sessions kept, want 5 (the cap)", n)
	}
	if n := live.Load(); n != 5 {
		t.Fatalf("got %d sessions registered with mcp-go, want 5", n)
	}
	if _, body := post(t, srv.URL+"/mcp", first, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); !bytes.Contains(body, []byte(`"tools"`)) {
		t.Fatalf("got %.200s for a dropped session's id, want it served", body)
	}
}

// TestSessionsExpireWhenIdle: a session unused for longer than Idle is
// dropped by the sweeper.
func TestSessionsExpireWhenIdle(t *testing.T) {
	s, err := New(Config{Compiled: mustCompile(t), Profile: catalog.DefaultProfile(kanban.ModeExternal), Backend: &recorder{},
		Sessions: SessionLimits{Idle: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	h := s.HTTP(t.Context(), "/mcp", "", "")
	srv := httptest.NewServer(h.Streamable)
	defer srv.Close()
	defer h.Shutdown(context.Background())
	post(t, srv.URL+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if n := h.Sessions(); n != 1 {
		t.Fatalf("got %d sessions, want 1", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.Sessions() != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := h.Sessions(); n != 0 {
		t.Fatalf("got %d sessions 10 s after a 1 s idle limit, want 0", n)
	}
}

// post sends one JSON-RPC message and returns the session id header and body.
func post(t *testing.T, url, session, body string) (string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Mcp-Session-Id"), b
}
