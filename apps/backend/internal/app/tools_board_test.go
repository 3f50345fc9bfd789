package app

import (
	"maps"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// validationCase is one raw-JSON call and the exact tool error it must get
// ("" = must succeed).
type validationCase struct {
	name, tool, args, want string
}

// runValidation runs cases through a real MCP client against a real
// backend: refused calls must carry the exact message and change nothing.
func runValidation(t *testing.T, e *env, c mcpCaller, cases []validationCase) {
	t.Helper()
	g := e.guardWrites()
	for _, tc := range cases {
		if tc.want == "" {
			g.finish("the calls before " + tc.name)
			if res := e.call(c, tc.tool, tc.args); res.IsError {
				t.Errorf("%s: got error %q, want success", tc.name, text(res))
			}
			g = e.guardWrites()
			continue
		}
		res := e.call(c, tc.tool, tc.args)
		if !res.IsError || text(res) != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, text(res), tc.want)
		}
		g.unchanged(tc.name)
	}
	g.finish("the refused calls")
}

func TestBoardToolsValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	p := "invalid arguments for "
	runValidation(t, e, c, []validationCase{
		{"omitted args", "list_workspaces_kandev", "", ""},
		{"null args", "list_workspaces_kandev", "null", ""},
		{"empty object", "list_workspaces_kandev", "{}", ""},
		{"non-object args", "list_workspaces_kandev", "[1]", p + "list_workspaces_kandev: /: expected object"},
		{"limit over max", "list_workspaces_kandev", `{"limit":201}`, p + "list_workspaces_kandev: /limit: must be <= 200 (maximum)"},
		{"limit under min", "list_workspaces_kandev", `{"limit":0}`, p + "list_workspaces_kandev: /limit: must be >= 1 (minimum)"},
		{"limit wrong type", "list_workspaces_kandev", `{"limit":"10"}`, p + "list_workspaces_kandev: /limit: expected integer"},
		{"missing required", "list_workflows_kandev", `{}`, p + `list_workflows_kandev: / is missing required "workspace_id"`},
		{"unknown root key with suggestion", "list_tasks_kandev", `{"workflow_idd":"x"}`,
			p + `list_tasks_kandev: unknown field at /; allowed: cursor, include_archived, limit, state, verbose, workflow_id, workflow_step_id (did you mean "workflow_id"?)`},
		{"enum near-miss", "list_tasks_kandev", `{"state":"todo"}`,
			p + "list_tasks_kandev: /state: must be one of: TODO, IN_PROGRESS, REVIEW, BLOCKED, WAITING_FOR_INPUT, COMPLETED, FAILED, CANCELLED (enum)"},
		{"several problems all reported", "list_tasks_kandev", `{"limit":500,"state":"x","include_archived":"yes"}`,
			p + "list_tasks_kandev: /include_archived: expected boolean; /limit: must be <= 200 (maximum); /state: must be one of: TODO, IN_PROGRESS, REVIEW, BLOCKED, WAITING_FOR_INPUT, COMPLETED, FAILED, CANCELLED (enum)"},
		{"bad cursor is a backend validation error", "list_tasks_kandev", `{"cursor":"!!"}`, "VALIDATION_ERROR: cursor: is not a valid cursor for this list"},
		{"steps of unknown workflow", "list_workflow_steps_kandev", `{"workflow_id":"nope"}`, "NOT_FOUND: workflow not found"},
	})
}

func TestCreateTaskValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	p := "invalid arguments for create_task_kandev: "
	long := strings.Repeat("é", 61)
	runValidation(t, e, c, []validationCase{
		{"missing title", "create_task_kandev", `{}`, p + `/ is missing required "title"`},
		{"title 61 runes", "create_task_kandev", `{"title":"` + long + `"}`, p + "/title: longer than 60 characters (maxLength)"},
		{"unknown root key", "create_task_kandev", `{"title":"t","promt":"x"}`, p + "unknown field at /; allowed: agent_profile_id, autopilot, base_branch, blocked_by, executor_profile_id, external_id, local_path, parent_id, prompt, repository_id, repository_url, start_agent, start_when_unblocked, title, workflow_id, workflow_step_id, workspace_id, workspace_mode (did you mean \"prompt\"?)"},
		{"prompt and description", "create_task_kandev", `{"title":"t","prompt":"a","description":"b"}`, p + "provide either prompt or description, not both"},
		{"blocked_by wrong item type", "create_task_kandev", `{"title":"t","blocked_by":[1]}`, p + "/blocked_by/0: expected string"},
		{"blocked_by duplicates", "create_task_kandev", `{"title":"t","blocked_by":["a","a"]}`, p + "/blocked_by: items must be unique (uniqueItems)"},
		{"start_agent wrong type", "create_task_kandev", `{"title":"t","start_agent":"false"}`, p + "/start_agent: expected boolean"},
		{"two repository locators", "create_task_kandev", `{"title":"t","local_path":"/a","repository_url":"https://x/y.git","start_agent":false}`,
			"VALIDATION_ERROR: provide at most one of repository_id, local_path, repository_url"},
		{"unknown blocker", "create_task_kandev", `{"title":"t","blocked_by":["nope"],"start_agent":false}`, "NOT_FOUND: blocked_by: task not found"},
		{"control character in title", "create_task_kandev", `{"title":"a\u0000b","start_agent":false}`, "VALIDATION_ERROR: title: must be a single line without control characters"},
		{"self as operator", "create_task_kandev", `{"title":"t","parent_id":"self"}`, `VALIDATION_ERROR: task_id: "self" is only available to agent sessions`},
	})
}

func TestCreateTaskEffects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	var first struct {
		Task         kanban.Task `json:"task"`
		Deduplicated bool        `json:"deduplicated"`
		SessionID    string      `json:"session_id"`
	}
	e.decode(e.call(c, "create_task_kandev", `{"title":"Ship it","prompt":"Do the thing","external_id":"ext-1"}`), &first)
	if first.Deduplicated || first.SessionID == "" || first.Task.Description != "Do the thing" || first.Task.State != kanban.TaskTodo {
		t.Fatalf("got %+v, want a new TODO task with its prompt and a session", first)
	}
	before := e.counts()
	var again struct {
		Task         kanban.Task `json:"task"`
		Deduplicated bool        `json:"deduplicated"`
		SessionID    string      `json:"session_id"`
	}
	e.decode(e.call(c, "create_task_kandev", `{"title":"Ship it","prompt":"Do the thing","external_id":"ext-1"}`), &again)
	if !again.Deduplicated || again.Task.ID != first.Task.ID || again.SessionID != first.SessionID {
		t.Fatalf("got %+v, want the same task deduplicated", again)
	}
	if after := e.counts(); !maps.Equal(after, before) {
		t.Fatalf("a deduplicated retry wrote rows: got %v, want %v", after, before)
	}
	var msgs struct {
		Items []kanban.Message `json:"items"`
	}
	e.dispatch(kanban.ActionMessageList, map[string]any{"task_id": first.Task.ID}, &msgs)
	if len(msgs.Items) != 1 || msgs.Items[0].Content != "Do the thing" || msgs.Items[0].Type != "prompt" {
		t.Fatalf("got conversation %+v, want the prompt as the first message", msgs.Items)
	}
	var blocked struct {
		Task kanban.Task `json:"task"`
	}
	e.decode(e.call(c, "create_task_kandev", `{"title":"After","blocked_by":["`+first.Task.ID+`"],"start_agent":false}`), &blocked)
	var blockers struct {
		Items []kanban.Task `json:"items"`
	}
	e.dispatch(kanban.ActionTaskDependencyList, map[string]any{"task_id": blocked.Task.ID}, &blockers)
	if len(blockers.Items) != 1 || blockers.Items[0].ID != first.Task.ID {
		t.Fatalf("got blockers %+v, want the first task", blockers.Items)
	}
}

func TestCreateTaskAsSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	var out struct {
		Task kanban.Task `json:"task"`
	}
	e.decode(e.call(s.Client, "create_task_kandev", `{"title":"Subtask","parent_id":"self","start_agent":false}`), &out)
	if out.Task.ParentID != s.TaskID || out.Task.WorkspaceID != s.WorkspaceID {
		t.Fatalf("got parent %q workspace %q, want the bound task %q and its workspace", out.Task.ParentID, out.Task.WorkspaceID, s.TaskID)
	}
	var other struct {
		Workspace kanban.Workspace
	}
	var ws kanban.Workspace
	e.dispatch(kanban.ActionWorkspaceCreate, map[string]any{"name": "Other"}, &ws)
	other.Workspace = ws
	before := e.fingerprint()
	res := e.call(s.Client, "create_task_kandev", `{"title":"Escape","workspace_id":"`+ws.ID+`","start_agent":false}`)
	if !res.IsError || text(res) != "FORBIDDEN: workspace_id is outside this session's workspace" {
		t.Fatalf("got %q, want FORBIDDEN", text(res))
	}
	if e.fingerprint() != before {
		t.Fatal("a forbidden call changed the database")
	}
}
