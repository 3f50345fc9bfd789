package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// TestWebSocketRefusesLikeMCP: the same bad payload sent as a tool call on
// /mcp and as the tool's action over a real WebSocket is refused with the
// identical message (the same compiled check runs on both), before any
// handler: nothing changes in the database.
func TestWebSocketRefusesLikeMCP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mcpc := e.operatorMCP()
	wsc := e.wsClient(e.token, nil)
	task := e.newTask("Target")
	cases := []refusalCase{
		{"create_task_kandev", kanban.ActionTaskCreate, `{"title":"` + strings.Repeat("x", 61) + `"}`},
		{"create_task_kandev", kanban.ActionTaskCreate, `{"title":"x","sk-live-CANARY":1}`},
		{"create_task_kandev", kanban.ActionTaskCreate, `{"Title":"x"}`},
		{"create_task_kandev", kanban.ActionTaskCreate, `{"title":5}`},
		{"create_task_kandev", kanban.ActionTaskCreate, `{"title":"x","prompt":"a","description":"b"}`},
		{"create_task_kandev", kanban.ActionTaskCreate, `["not","an","object"]`},
		{"create_task_kandev", kanban.ActionTaskCreate, `{"title":"x","external_id":"` + strings.Repeat("k", 300) + `"}`},
		{"update_task_state_kandev", kanban.ActionTaskSetState, `{"task_id":"` + task.ID + `","state":"sk-live-CANARY"}`},
		{"move_task_kandev", kanban.ActionTaskMove, `{"task_id":"` + task.ID + `"}`},
		{"move_task_kandev", kanban.ActionTaskMove, `{"task_id":"` + task.ID + `","workflow_step_id":"s","position":-1}`},
		{"list_workflows_kandev", kanban.ActionWorkflowList, `{}`},
		{"update_workflow_step_kandev", kanban.ActionWorkflowStepUpdate, `{"step_id":"s","wip_limit":-1,"events":{"whenever":[]}}`},
		{"update_mcp_config_kandev", kanban.ActionMCPConfigUpdate, `{"profile_id":"p","servers":{"sk-live-CANARY":{"type":"carrier-pigeon"}}}`},
		{"delete_task_kandev", kanban.ActionTaskDelete, `{"id":"` + task.ID + `"}`},
	}
	refusesAlike(e, mcpc, wsc, cases)

	// A session (task mode) over its own MCP server and its token on the
	// WebSocket: rules only the schema holds (the handler does not check
	// them again).
	s := e.sessionMCP(kanban.ModeTask, "")
	refusesAlike(e, s.Client, e.wsClient(s.Token, nil), []refusalCase{
		{"message_task_kandev", kanban.ActionTaskMessage, `{"task_id":"` + task.ID + `","prompt":"x","delivery_mode":"later"}`},
		{"message_task_kandev", kanban.ActionTaskMessage, `{"task_id":"` + task.ID + `","prompt":""}`},
	})
}

type refusalCase struct {
	tool   string
	action kanban.Action
	args   string
}

// refusesAlike sends each case over MCP and over the WebSocket and checks
// identical refusals that echo nothing and change nothing.
func refusesAlike(e *env, mcpc *client.Client, wsc *ws.Client, cases []refusalCase) {
	t := e.t
	t.Helper()
	g := e.guardWrites()
	defer g.finish("refusals over MCP and the WebSocket")
	for _, tc := range cases {
		res := e.call(mcpc, tc.tool, tc.args)
		if !res.IsError {
			t.Fatalf("%s %s over MCP: got success, want a refusal", tc.tool, tc.args)
		}
		want := text(res)
		err := wsc.Call(context.Background(), tc.action, json.RawMessage(tc.args), nil)
		ke, ok := kanban.AsError(err)
		if !ok || ke.Code != kanban.CodeValidation {
			t.Errorf("%s %s over WebSocket: got %v, want VALIDATION_ERROR", tc.action, tc.args, err)
			continue
		}
		if ke.Message != want {
			t.Errorf("%s %s:\n got WebSocket %q\nwant MCP's     %q", tc.action, tc.args, ke.Message, want)
		}
		if strings.Contains(ke.Message, "CANARY") {
			t.Errorf("%s: the message echoes a caller value: %q", tc.action, ke.Message)
		}
		g.unchanged(string(tc.action) + " " + tc.args)
	}
}
