package toolserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// TestPreflightOncePerPath: a message the HTTP transport preflighted is not
// preflighted again by the hook (the context says so), while a message
// handed to mcp-go directly, unmarked, still is: an unknown tool name is
// refused without its name on both paths, and only the marked direct call
// reaches mcp-go's own lookup.
func TestPreflightOncePerPath(t *testing.T) {
	s, err := New(Config{Compiled: mustCompile(t), Profile: catalog.DefaultProfile(kanban.ModeTask), Backend: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	const canary = "CANARY_tool_name"
	call := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + canary + `","arguments":{}}}`)
	answer := func(ctx context.Context) string {
		b, err := json.Marshal(s.MCP().HandleMessage(ctx, json.RawMessage(call)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := answer(context.Background()); strings.Contains(got, canary) || !strings.Contains(got, "unknown tool") {
		t.Errorf("unmarked in-process call: got %s, want the hook's refusal without the name", got)
	}
	if got := answer(withPreflighted(context.Background())); !strings.Contains(got, canary) {
		t.Errorf("marked in-process call: got %s, want mcp-go's own answer (the hook skipped)", got)
	}
	h := s.HTTP(t.Context(), "/mcp", "", "")
	t.Cleanup(func() { h.Shutdown(context.Background()) })
	req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(call))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	h.Streamable.ServeHTTP(rec, req)
	if got := rec.Body.String(); strings.Contains(got, canary) || !strings.Contains(got, "unknown tool") {
		t.Errorf("HTTP call: got %d %s, want the transport's refusal without the name", rec.Code, got)
	}
}
