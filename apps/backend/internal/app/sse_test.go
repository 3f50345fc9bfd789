package app

import (
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestLegacySSEEndpoint drives GET /mcp/sse + POST /mcp/message with
// mcp-go's SSE client: the same external tools, the same validation.
func TestLegacySSEEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res, err := http.Get(e.url + "/mcp/sse")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("without a token: got %d, want 401 with WWW-Authenticate", res.StatusCode)
	}
	c, err := client.NewSSEMCPClient(e.url+"/mcp/sse", transport.WithHeaders(map[string]string{"Authorization": "Bearer " + e.token}))
	if err != nil {
		t.Fatal(err)
	}
	e.initialize(c)
	var ws struct {
		Items []kanban.Workspace `json:"items"`
	}
	e.decode(e.call(c, "list_workspaces_kandev", ""), &ws)
	if len(ws.Items) != 1 {
		t.Fatalf("got %d workspaces, want 1", len(ws.Items))
	}
	before := e.fingerprint()
	if r := e.call(c, "create_task_kandev", `{"title":"x","bogus":1}`); !r.IsError || text(r) != "invalid arguments for create_task_kandev: unknown field at /; allowed: agent_profile_id, autopilot, base_branch, blocked_by, executor_profile_id, external_id, local_path, parent_id, prompt, repository_id, repository_url, start_agent, start_when_unblocked, title, workflow_id, workflow_step_id, workspace_id, workspace_mode" {
		t.Fatalf("got %q, want the unknown-field error", text(r))
	}
	if e.fingerprint() != before {
		t.Fatal("a refused call over SSE changed the database")
	}
}
