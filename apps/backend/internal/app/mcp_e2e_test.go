package app

import (
	"maps"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestExternalMCPListAndCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	var ws struct {
		Items []kanban.Workspace `json:"items"`
	}
	e.decode(e.call(c, "list_workspaces_kandev", ""), &ws)
	if len(ws.Items) != 1 || ws.Items[0].Name != "Default" {
		t.Fatalf("got workspaces %+v, want the seeded Default", ws.Items)
	}
	before := e.counts()
	r := e.call(c, "create_task_kandev", `{"title":"x","prompt":"a","description":"b"}`)
	if !r.IsError || text(r) != "invalid arguments for create_task_kandev: provide either prompt or description, not both" {
		t.Fatalf("got %q, want the prompt/description error", text(r))
	}
	if got := e.counts(); !maps.Equal(got, before) {
		t.Fatalf("a refused call changed the database: got %v, want %v", got, before)
	}
	var out struct {
		Task      kanban.Task `json:"task"`
		SessionID string      `json:"session_id"`
	}
	e.decode(e.call(c, "create_task_kandev", `{"title":"Legacy","description":"the prompt"}`), &out)
	if out.Task.Description != "the prompt" || out.SessionID == "" {
		t.Fatalf("got task %+v session %q, want the legacy description stored as prompt and a session", out.Task, out.SessionID)
	}
}

func TestSessionMCPModeSwitch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	r := e.call(s.Client, "create_task_kandev", `{"title":"Child","parent_id":"self","start_agent":false}`)
	if r.IsError {
		t.Fatalf("create_task as session: %s", text(r))
	}
	if _, err := e.b.svc.SetMode(t.Context(), s.ID, kanban.ModeConfig); err != nil {
		t.Fatalf("set mode: %v", err)
	}
	waitFor(t, func() bool { return s.MCP.Server().Profile().Mode == kanban.ModeConfig })
	r2, err := s.Client.ListTools(t.Context(), mcpListReq())
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	for _, tool := range r2.Tools {
		if tool.Name == "create_task_kandev" {
			t.Fatalf("create_task_kandev still listed in config mode")
		}
	}
	if _, err := callErr(s.Client, "create_task_kandev", `{"title":"x"}`); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("got %v, want an unknown-tool protocol error", err)
	}
}
