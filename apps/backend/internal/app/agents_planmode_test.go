package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// planWorkflow creates Backlog → Plan (plan mode, an agent started with a
// {{task_prompt}} step prompt) → Review → Build (a fresh agent context)
// and returns its steps.
func planWorkflow(e *env, mockProfile string) []kanban.WorkflowStep {
	e.t.Helper()
	steps := fmt.Sprintf(`[{"name":"Backlog"},
		{"name":"Plan","prompt":"Plan the task.\n{{task_prompt}}\n@mode\n@prompt","events":{
			"on_enter":[{"type":"start_agent","config":{"agent_profile_id":%q}},{"type":"enable_plan_mode"}],
			"on_exit":[{"type":"disable_plan_mode"}]}},
		{"name":"Review"},
		{"name":"Build","prompt":"Build it.\n@mode\n@session\n@prompt","events":{"on_enter":[{"type":"reset_agent_context"}]}}]`, mockProfile)
	var wf action.WorkflowOut
	e.dispatch(kanban.ActionWorkflowCreate, json.RawMessage(`{"name":"Plan and build","steps":`+steps+`}`), &wf)
	return wf.Steps
}

// TestAgentPlanMode: entering a plan-mode step switches the mock agent's
// ACP session to plan and starts every prompt with the plan-mode
// instructions; the step prompt's {{task_prompt}} becomes the task's
// prompt in one block; a backend restart keeps plan mode; leaving the
// step switches back, and reset_agent_context gives the next turn a fresh
// ACP session.
func TestAgentPlanMode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inDir := func(c *Config) { c.DataDir = dir }
	e1 := newAgentEnv(t, inDir)
	steps := planWorkflow(e1, e1.profileOf("mock-agent").ID)
	var created action.TaskCreateOut
	f := false
	e1.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: "Login page", Prompt: "Add a login page.\n@say task prompt seen",
		WorkflowID: steps[0].WorkflowID, WorkflowStepID: steps[0].ID, StartAgent: &f}, &created)
	task := created.Task
	e1.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: steps[1].ID}, nil)

	e1.waitMessage(task.ID, "status", "enable_plan_mode: plan mode on")
	e1.waitMessage(task.ID, "status", "The agent's ACP session mode is now plan (it was default).")
	e1.waitMessage(task.ID, "message", "task prompt seen")
	e1.waitMessage(task.ID, "message", "mode: plan")
	e1.waitMessage(task.ID, "message", "prompt: 2 text blocks\n1: <kandev-system>PLAN MODE ACTIVE:\n2: Plan the task.")
	e1.waitMessage(task.ID, "prompt", "Plan the task.\nAdd a login page.\n@say task prompt seen\n@mode")
	sid := e1.sessionOf(task.ID)
	first := e1.waitState(sid, kanban.SessionIdle).AgentSessionID
	e1.close()

	e2 := newAgentEnv(t, inDir)
	e2.waitMessage(task.ID, "status", "Resumed the agent's session")
	e2.waitState(sid, kanban.SessionIdle)
	e2.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "After the restart.\n@mode\n@prompt"}, nil)
	e2.waitMessage(task.ID, "message", "prompt: 2 text blocks\n1: <kandev-system>PLAN MODE ACTIVE:\n2: After the restart.")
	if n := e2.count(task.ID, "message", "mode: plan"); n != 2 {
		t.Fatalf("%d replies say mode: plan after the restart, want 2:%s", n, dumpConversation(e2.conversation(task.ID)))
	}
	e2.waitState(sid, kanban.SessionIdle)

	moved := time.Now()
	e2.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: steps[2].ID}, nil)
	back := e2.waitMessage(task.ID, "status", "The agent's ACP session mode is now default (it was plan).")
	t.Logf("from the move to the recorded mode switch: %v", back.CreatedAt.Sub(moved))
	e2.waitState(sid, kanban.SessionIdle)

	e2.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: steps[3].ID}, nil)
	e2.waitMessage(task.ID, "status", "reset_agent_context: the agent runs in a fresh session")
	e2.waitMessage(task.ID, "message", "prompt: 1 text block\n1: Build it.")
	if n := e2.count(task.ID, "message", "mode: default"); n != 1 {
		t.Fatalf("%d replies say mode: default, want 1:%s", n, dumpConversation(e2.conversation(task.ID)))
	}
	s := e2.waitState(sid, kanban.SessionIdle)
	if s.AgentSessionID == "" || s.AgentSessionID == first {
		t.Fatalf("agent session %q after the reset, was %q", s.AgentSessionID, first)
	}
	e2.waitMessage(task.ID, "message", "session: "+s.AgentSessionID+", prompt 1")
}

// TestAgentSessionModes: set_session_mode switches the agent to a mode it
// offers; one it does not offer is recorded, and the agent returns to the
// mode its session started in; an agent that offers no modes gets plan
// mode through its prompts only, with a status message saying so.
func TestAgentSessionModes(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	mock := e.profileOf("mock-agent").ID
	steps := `[{"name":"Start"},
		{"name":"Careful","events":{"on_enter":[{"type":"set_session_mode","config":{"mode":"plan"}}]}},
		{"name":"Wild","events":{"on_enter":[{"type":"set_session_mode","config":{"mode":"yolo"}}]}}]`
	var wf action.WorkflowOut
	e.dispatch(kanban.ActionWorkflowCreate, json.RawMessage(`{"name":"Modes","steps":`+steps+`}`), &wf)
	task, sid := e.startMock("Modes", "@mode", map[string]any{"workflow_id": wf.Workflow.ID, "workflow_step_id": wf.Steps[0].ID, "agent_profile_id": mock})
	e.waitMessage(task.ID, "message", "mode: default")
	e.waitState(sid, kanban.SessionIdle)
	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: wf.Steps[1].ID}, nil)
	e.waitMessage(task.ID, "status", "The agent's ACP session mode is now plan (it was default).")
	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: wf.Steps[2].ID}, nil)
	e.waitMessage(task.ID, "status", "The agent does not offer ACP session mode yolo (it offers: default, plan).")
	e.waitMessage(task.ID, "status", "The agent's ACP session mode is now default (it was plan).")
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "status", "set_session_mode: the task's agents switch to ACP session mode yolo")
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@mode\n@say probe done"}, nil)
	e.waitMessage(task.ID, "message", "probe done")
	if n := e.count(task.ID, "message", "mode: default"); n != 2 {
		t.Fatalf("%d replies say mode: default, want 2:%s", n, dumpConversation(e.conversation(task.ID)))
	}

	bin := kandevBinary(t)
	noModes := newAgentEnv(t, withAgentCommands(t, map[string]any{"mock-agent": map[string]any{"command": bin, "args": []string{"agent", "mock", "--no-modes"}}}))
	steps = fmt.Sprintf(`[{"name":"Backlog"},{"name":"Plan","prompt":"Plan.\n@mode\n@prompt","events":{
		"on_enter":[{"type":"enable_plan_mode"},{"type":"start_agent","config":{"agent_profile_id":%q}}]}}]`, noModes.profileOf("mock-agent").ID)
	noModes.dispatch(kanban.ActionWorkflowCreate, json.RawMessage(`{"name":"No modes","steps":`+steps+`}`), &wf)
	var created action.TaskCreateOut
	f := false
	noModes.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: "Plan only", Prompt: "@say go",
		WorkflowID: wf.Workflow.ID, WorkflowStepID: wf.Steps[0].ID, StartAgent: &f}, &created)
	noModes.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: created.Task.ID, WorkflowStepID: wf.Steps[1].ID}, nil)
	noModes.waitMessage(created.Task.ID, "status", "Plan mode is on. The agent offers no ACP session modes")
	noModes.waitMessage(created.Task.ID, "message", "mode: none")
	noModes.waitMessage(created.Task.ID, "message", "prompt: 3 text blocks\n1: <kandev-system>PLAN MODE ACTIVE:\n2: Plan.\n3: @say go")
}

// TestAgentStartsInEntryModes: a task created with its agent on a step
// whose on_enter enables plan mode starts in plan mode, whichever of the
// engine and the runtime gets there first; an agent that leaves plan mode
// by itself is switched back before its next turn.
func TestAgentStartsInEntryModes(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	var wf action.WorkflowOut
	e.dispatch(kanban.ActionWorkflowCreate, json.RawMessage(`{"name":"Planned","steps":[{"name":"Plan","events":{"on_enter":[{"type":"enable_plan_mode"}]}}]}`), &wf)
	task, sid := e.startMock("Planned", "@mode\n@prompt", map[string]any{"workflow_id": wf.Workflow.ID, "workflow_step_id": wf.Steps[0].ID})
	e.waitMessage(task.ID, "message", "mode: plan")
	e.waitMessage(task.ID, "message", "prompt: 2 text blocks\n1: <kandev-system>PLAN MODE ACTIVE:\n2: @mode")
	e.waitState(sid, kanban.SessionIdle)

	// The agent leaves plan mode by itself: recorded, and undone before
	// its next turn while the task's plan mode is on.
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@mode default"}, nil)
	e.waitMessage(task.ID, "status", "The agent switched its ACP session mode to default.")
	e.waitState(sid, kanban.SessionIdle)
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@mode\n@say probe done"}, nil)
	e.waitMessage(task.ID, "message", "probe done")
	if a, b := e.count(task.ID, "status", "The agent's ACP session mode is now plan (it was default)."), e.count(task.ID, "message", "mode: plan"); a != 2 || b != 2 {
		t.Fatalf("%d switches to plan and %d replies in plan, want 2 and 2:%s", a, b, dumpConversation(e.conversation(task.ID)))
	}
}

// sessionOf returns the id of the task's newest session.
func (e *env) sessionOf(taskID string) string {
	e.t.Helper()
	var l kanban.List[kanban.Session]
	e.dispatch(kanban.ActionSessionList, map[string]any{"task_id": taskID}, &l)
	if len(l.Items) == 0 {
		e.t.Fatal("the task has no session")
	}
	return l.Items[0].ID
}

// count counts the task's messages of typ whose content contains want.
func (e *env) count(taskID, typ, want string) int {
	n := 0
	for _, m := range e.conversation(taskID) {
		if m.Type == typ && strings.Contains(m.Content, want) {
			n++
		}
	}
	return n
}

// TestMCPAttachedWhileAnotherServerIs: when a session's MCP server goes
// away while another one of the same session is attached (the old ACP
// session's server after reset_agent_context), the session stays
// attached; it is detached when the last one goes.
func TestMCPAttachedWhileAnotherServerIs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := e.sessionMCP(kanban.ModeTask, "")
	second, err := StartSessionMCP(context.Background(), MCPConfig{BackendURL: e.url, SessionID: first.ID, Token: first.Token,
		Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Close)
	attached := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(agentWait)
		for {
			var s kanban.Session
			e.dispatch(kanban.ActionSessionGet, action.IDIn{ID: first.ID}, &s)
			if s.MCPAttached == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("mcp_attached %v, want %v", s.MCPAttached, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	attached(true)
	first.MCP.Close()
	time.Sleep(300 * time.Millisecond) // room for the backend to see the disconnect
	attached(true)
	second.Close()
	attached(false)
}
