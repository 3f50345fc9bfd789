package app

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBudgetAlertsAndLimit: a workspace budget of 1000 tokens with an
// alert at 80 %; the mock agent's reported usage reaches 80 % and the
// step's on_budget_alert automation (set_state REVIEW) runs once, the
// alert shown in the conversation and sent on the workspace topic; past
// 100 % the next prompt is refused with BUDGET_EXCEEDED naming the
// budget and its spend (in the call's error and the conversation; an
// agent's message_task_kandev gets it too), and
// a session started then does not run its first turn; the operator
// raises the limit and the next prompt runs.
func TestBudgetAlertsAndLimit(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	heard := e.subscribe(action.WorkspaceTopic(e.workspaceID()))
	var wf action.WorkflowOut
	e.decode(e.call(e.operatorMCP(), "create_workflow_kandev", mustJSON(t, map[string]any{"name": "Budgeted", "steps": []any{
		map[string]any{"name": "Work", "events": map[string]any{
			"on_budget_alert": []any{map[string]any{"type": "set_state", "config": map[string]any{"state": "REVIEW"}}},
		}},
	}})), &wf)
	var b kanban.Budget
	e.dispatch(kanban.ActionBudgetSet, action.BudgetSetIn{Scope: kanban.BudgetWorkspace, ScopeID: e.workspaceID(), TokenLimit: 1000}, &b)
	if b.Revision != 1 || len(b.Thresholds) != 1 || b.Thresholds[0] != 80 {
		t.Fatalf("budget %+v", b)
	}
	task, sid := e.startMock("Budgeted task", "@usage {\"inputTokens\":500,\"outputTokens\":300}\n@say turn one",
		map[string]any{"workflow_id": wf.Workflow.ID})
	e.waitMessage(task.ID, "status", "on_budget_alert of Work, set_state")
	e.waitMessage(task.ID, "status", "reached its 80% threshold (80% of its limit spent)")
	e.waitTask(task.ID, kanban.TaskReview)
	e.waitState(sid, kanban.SessionIdle)

	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@usage {\"inputTokens\":300}\n@say turn two"}, nil)
	e.waitMessage(task.ID, "message", "turn two")
	e.waitUsage(sid, 2)
	e.waitState(sid, kanban.SessionIdle)

	e.checkBudgetRefusals(task.ID, wf.Workflow.ID)

	e.dispatch(kanban.ActionBudgetSet, action.BudgetSetIn{Scope: kanban.BudgetWorkspace, ScopeID: e.workspaceID(), TokenLimit: 10000}, &b)
	if b.Revision != 2 || b.Spent.Tokens != 1100 || b.Spent.Percent != 11 {
		t.Fatalf("raised budget %+v (%+v)", b, b.Spent)
	}
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@say turn four"}, nil)
	e.waitMessage(task.ID, "message", "turn four")
	if n := e.count(task.ID, "status", "on_budget_alert of Work"); n != 1 {
		t.Fatalf("on_budget_alert ran %d times, want once: %s", n, dumpConversation(e.conversation(task.ID)))
	}
	heard.mu.Lock()
	alerts := len(heard.got[kanban.EventBudgetAlerted.Name()])
	heard.mu.Unlock()
	if alerts != 1 {
		t.Fatalf("%d %s events, want 1", alerts, kanban.EventBudgetAlerted.Name())
	}
	var l kanban.List[kanban.Budget]
	e.dispatch(kanban.ActionBudgetList, action.BudgetListIn{Scope: kanban.BudgetWorkspace}, &l)
	if len(l.Items) != 1 || l.Items[0].ScopeID != e.workspaceID() {
		t.Fatalf("budgets %+v", l.Items)
	}
}

// checkBudgetRefusals: past the workspace budget's limit, a prompt to
// taskID is refused with BUDGET_EXCEEDED (in the call's error and the
// conversation; an agent's message_task_kandev gets it too) and a
// session started on a new task of workflowID does not run its first
// turn.
func (e *env) checkBudgetRefusals(taskID, workflowID string) {
	e.t.Helper()
	err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionTaskMessage,
		action.TaskMessageIn{TaskID: taskID, Prompt: "@say turn three"}, nil)
	if kanban.ErrorCode(err) != kanban.CodeBudgetExceeded || !strings.Contains(err.Error(), "workspace budget") ||
		!strings.Contains(err.Error(), "tokens 1100 of 1000") {
		e.t.Fatalf("prompt past the limit: %v, want BUDGET_EXCEEDED naming the workspace budget and 1100 of 1000 tokens", err)
	}
	e.waitMessage(taskID, "error", "BUDGET_EXCEEDED")
	// An agent's message_task_kandev, which would queue the turn, gets the
	// same refusal.
	agent := e.sessionMCP(kanban.ModeTask, "")
	res := e.call(agent.Client, "message_task_kandev", mustJSON(e.t, map[string]any{"task_id": taskID, "prompt": "@say from an agent"}))
	if !res.IsError || !strings.Contains(text(res), "BUDGET_EXCEEDED") || !strings.Contains(text(res), "tokens 1100 of 1000") {
		e.t.Fatalf("message_task_kandev past the limit: %s", text(res))
	}
	if e.agentSaid(taskID, "turn three") || e.agentSaid(taskID, "from an agent") {
		e.t.Fatal("the refused prompt ran")
	}

	// A session started now (auto start) does not run its first turn:
	// the runtime refuses it, in the conversation.
	other, _ := e.startMock("Started past the limit", "@say never", map[string]any{"workflow_id": workflowID})
	e.waitMessage(other.ID, "error", "Turn refused: BUDGET_EXCEEDED")
	if e.agentSaid(other.ID, "never") {
		e.t.Fatal("the refused first turn ran")
	}
}
