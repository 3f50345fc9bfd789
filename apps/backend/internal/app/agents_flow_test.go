package app

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestAgentQuestionLoop: the agent's ask_user_question_kandev blocks, the
// session and task wait for input, an operator answers with
// answer_question_kandev and the agent continues.
func TestAgentQuestionLoop(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	q := `{"questions":[{"prompt":"Which database?","options":[{"label":"SQLite","description":"Embedded"},{"label":"PostgreSQL","description":"Server"}]}]}`
	task, sid := e.startMock("Question task", "@tool ask_user_question_kandev "+q+"\n@say Answer received.", nil)
	e.waitState(sid, kanban.SessionWaitingForInput)
	e.waitTask(task.ID, kanban.TaskWaitingForInput)
	op := e.operatorMCP()
	var pending kanban.List[kanban.Question]
	e.decode(e.call(op, "list_pending_questions_kandev", `{}`), &pending)
	if len(pending.Items) != 1 || pending.Items[0].SessionID != sid {
		t.Fatalf("pending questions %+v", pending.Items)
	}
	res := e.call(op, "answer_question_kandev", mustJSON(t, map[string]any{"pending_id": pending.Items[0].ID,
		"answers": []map[string]any{{"question_id": "q1", "selected_options": []string{"q1_opt1"}}}}))
	if res.IsError {
		t.Fatalf("answer: %s", text(res))
	}
	e.waitMessage(task.ID, "message", "Answer received.")
	tc := e.waitMessage(task.ID, "tool_call", "ask_user_question_kandev")
	if !strings.Contains(tc.Content, "SQLite") || !strings.Contains(tc.Content, `completed`) {
		t.Fatalf("question tool call %s", tc.Content)
	}
	e.waitState(sid, kanban.SessionIdle)
	e.waitTask(task.ID, kanban.TaskReview)
}

// TestAgentPermissionResolved: a permission request waits as a pending
// permission, an operator resolves it with the external tools, and the
// agent goes on; a second answer is not claimed.
func TestAgentPermissionResolved(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	task, sid := e.startMock("Permission task", "@permission Deploy to staging\n@say Deployed.", nil)
	e.waitState(sid, kanban.SessionWaitingForInput)
	e.waitTask(task.ID, kanban.TaskWaitingForInput)
	op := e.operatorMCP()
	var pending kanban.List[kanban.Permission]
	e.decode(e.call(op, "list_pending_agent_permissions_kandev", mustJSON(t, map[string]any{"task_id": task.ID})), &pending)
	if len(pending.Items) != 1 {
		t.Fatalf("pending permissions %+v", pending.Items)
	}
	p := pending.Items[0]
	if p.Title != "Deploy to staging" || len(p.Options) != 2 || p.State != kanban.PermissionPending {
		t.Fatalf("permission %+v", p)
	}
	args := map[string]any{"task_id": task.ID, "session_id": sid, "request_id": p.ID, "pending_id": p.PendingID, "option_id": "nope"}
	if res := e.call(op, "resolve_agent_permission_kandev", mustJSON(t, args)); !res.IsError || !strings.Contains(text(res), "option_id") {
		t.Fatalf("unknown option accepted: %s", text(res))
	}
	args["option_id"] = "allow"
	var out action.PermissionResolveOut
	e.decode(e.call(op, "resolve_agent_permission_kandev", mustJSON(t, args)), &out)
	if !out.Claimed || out.State != kanban.PermissionResolved || out.OptionID != "allow" {
		t.Fatalf("resolve %+v", out)
	}
	e.waitMessage(task.ID, "message", "Deployed.")
	args["option_id"] = "reject"
	e.decode(e.call(op, "resolve_agent_permission_kandev", mustJSON(t, args)), &out)
	if out.Claimed || out.OptionID != "allow" {
		t.Fatalf("second answer %+v", out)
	}
	e.waitState(sid, kanban.SessionIdle)
}

// TestAgentPermissionRejectedAndAutoApproved: a rejection ends the turn;
// an auto-approving profile never asks.
func TestAgentPermissionRejectedAndAutoApproved(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	task, sid := e.startMock("Reject task", "@permission Delete prod\n@say Should not happen.", nil)
	e.waitState(sid, kanban.SessionWaitingForInput)
	var pending kanban.List[kanban.Permission]
	e.dispatch(kanban.ActionPermissionList, action.PermissionListIn{TaskID: task.ID}, &pending)
	p := pending.Items[0]
	e.dispatch(kanban.ActionPermissionResolve, action.PermissionResolveIn{TaskID: task.ID, SessionID: sid, RequestID: p.ID,
		PendingID: p.PendingID, OptionID: "reject"}, nil)
	e.waitMessage(task.ID, "message", "Permission not granted: Delete prod")
	e.waitState(sid, kanban.SessionIdle)
	if e.agentSaid(task.ID, "Should not happen.") {
		t.Fatal("the turn went on after a rejection")
	}

	mock := e.profileOf("mock-agent")
	var prof kanban.AgentProfile
	e.dispatch(kanban.ActionAgentProfileCreate, map[string]any{"agent_id": mock.AgentID, "name": "auto", "auto_approve": true}, &prof)
	task2, sid2 := e.startMock("Auto task", "@permission Run the tests\n@say Tests ran.", map[string]any{"agent_profile_id": prof.ID})
	e.waitMessage(task2.ID, "message", "Tests ran.")
	e.waitMessage(task2.ID, "permission", "Auto-approved")
	e.dispatch(kanban.ActionPermissionList, action.PermissionListIn{TaskID: task2.ID, Status: "all"}, &pending)
	if len(pending.Items) != 0 {
		t.Fatalf("auto-approve stored requests %+v", pending.Items)
	}
	e.waitState(sid2, kanban.SessionIdle)
}

// TestAgentPermissionExpires: an unanswered request is answered cancelled
// once the wait bound passes, so the agent never hangs.
func TestAgentPermissionExpires(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t, func(c *Config) { c.QuestionWait = 500 * time.Millisecond })
	task, sid := e.startMock("Expiry task", "@permission Wait forever\n@say after", nil)
	e.waitMessage(task.ID, "message", "Permission not granted: Wait forever")
	e.waitState(sid, kanban.SessionIdle)
	var all kanban.List[kanban.Permission]
	e.dispatch(kanban.ActionPermissionList, action.PermissionListIn{TaskID: task.ID, Status: "all"}, &all)
	if len(all.Items) != 1 || all.Items[0].State != kanban.PermissionExpired {
		t.Fatalf("permissions %+v", all.Items)
	}
	e.waitMessage(task.ID, "permission", "Expired, nobody answered in time: Wait forever")
	assertNoWaitingRecord(t, e, task.ID)
}

// TestAgentPermissionCancelledByStop: stopping an agent whose permission
// request waits cancels the request, and the conversation's record says
// so instead of "Waiting for an operator".
func TestAgentPermissionCancelledByStop(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	task, sid := e.startMock("Stop while asking", "@permission Deploy it\n@say after", nil)
	e.waitPermission(task.ID, "Deploy it")
	e.dispatch(kanban.ActionTaskStop, action.TaskStopIn{TaskID: task.ID}, nil)
	e.waitState(sid, kanban.SessionCancelled)
	e.waitMessage(task.ID, "permission", "Cancelled (the agent's session stopped): Deploy it")
	assertNoWaitingRecord(t, e, task.ID)
	if got := e.task(task.ID).State; got != kanban.TaskCancelled {
		t.Fatalf("task state: got %s, want CANCELLED (stopped while waiting for input)", got)
	}
}

// assertNoWaitingRecord fails when a permission record of the task's
// conversation still says it waits for an operator.
func assertNoWaitingRecord(t *testing.T, e *env, taskID string) {
	t.Helper()
	for _, m := range e.conversation(taskID) {
		if m.Type == "permission" && strings.HasPrefix(m.Content, "Waiting for an operator") {
			t.Fatalf("a closed permission request still reads %q", m.Content)
		}
	}
}

// TestAgentCrash: an agent that exits with code 3 fails its session with
// the exit code; the task fails with it.
func TestAgentCrash(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	task, sid := e.startMock("Crash task", "@say about to crash\n@exit 3", nil)
	s := e.waitState(sid, kanban.SessionFailed)
	if s.ExitCode == nil || *s.ExitCode != 3 || !strings.Contains(s.Error, "exited with code 3") || s.EndedAt == nil {
		t.Fatalf("failed session %+v", s)
	}
	e.waitTask(task.ID, kanban.TaskFailed)
	e.waitMessage(task.ID, "error", "exited with code 3")
}

// TestAgentStop: stopping a task whose agent sleeps cancels it within the
// stop bound and ends the agent and its MCP server.
func TestAgentStop(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	task, sid := e.startMock("Stop task", "@sleep 60000", nil)
	e.waitSession(sid, "running with its MCP server attached", func(s *kanban.Session) bool {
		return s.State == kanban.SessionRunning
	})
	start := time.Now()
	var out action.TaskStopOut
	e.dispatch(kanban.ActionTaskStop, action.TaskStopIn{TaskID: task.ID, Reason: "no longer needed"}, &out)
	if len(out.StoppedSessionIDs) != 1 || out.StoppedSessionIDs[0] != sid {
		t.Fatalf("stopped %v", out.StoppedSessionIDs)
	}
	e.waitNoAgents()
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("stopping took %s", d)
	}
	s := e.waitState(sid, kanban.SessionCancelled)
	if s.EndedAt == nil {
		t.Fatal("no ended_at")
	}
	// Stopped mid-work: the task says its agent's work was cancelled
	// (before: REVIEW, as if the agent had finished).
	e.waitTask(task.ID, kanban.TaskCancelled)
	e.waitMessage(task.ID, "status", "no longer needed")
}

// TestAgentStopAtRest: stopping an agent that finished its turn interrupts
// nothing: the task stays in Review (step and state), as for an agent
// that exits.
func TestAgentStopAtRest(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	task, sid := e.startMock("Rest", "@say All done.", nil)
	e.waitState(sid, kanban.SessionIdle)
	e.waitTask(task.ID, kanban.TaskReview)
	e.dispatch(kanban.ActionTaskStop, action.TaskStopIn{TaskID: task.ID}, nil)
	e.waitState(sid, kanban.SessionCancelled)
	if got := e.task(task.ID).State; got != kanban.TaskReview {
		t.Fatalf("task state after stopping an idle agent: got %s, want REVIEW", got)
	}
}

// TestAgentQueuedMessageAndInterrupt: a queued message is the agent's next
// turn; an interrupt cancels the current turn and is delivered at once.
func TestAgentQueuedMessageAndInterrupt(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	task, sid := e.startMock("Messages task", "@sleep 800\n@say first turn done", nil)
	e.waitState(sid, kanban.SessionRunning)
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@say second turn"}, nil)
	first := e.waitMessage(task.ID, "message", "first turn done")
	second := e.waitMessage(task.ID, "message", "second turn")
	if first.Turn != 1 || second.Turn != 2 {
		t.Fatalf("turns %d, %d", first.Turn, second.Turn)
	}
	e.waitState(sid, kanban.SessionIdle)

	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@sleep 60000\n@say never"}, nil)
	e.waitState(sid, kanban.SessionRunning)
	start := time.Now()
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, SessionID: sid, Prompt: "@say interrupted you", DeliveryMode: "interrupt"}, nil)
	e.waitMessage(task.ID, "message", "interrupted you")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("interrupt took %s", d)
	}
	e.waitMessage(task.ID, "status", "cancelled")
	if e.agentSaid(task.ID, "never") {
		t.Fatal("the interrupted turn went on")
	}
}

// TestAgentMaxAgents: over --max-agents a session waits QUEUED; an idle
// agent yields its slot to it.
func TestAgentMaxAgents(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t, func(c *Config) { c.Agents.MaxAgents = 1 })
	t1, s1 := e.startMock("First", "@sleep 700\n@say one", nil)
	e.waitState(s1, kanban.SessionRunning)
	t2, s2 := e.startMock("Second", "@say two", nil)
	if s := e.waitState(s2, kanban.SessionQueued); s.StartedAt != nil {
		t.Fatal("queued session started")
	}
	e.waitMessage(t1.ID, "message", "one")
	e.waitMessage(t2.ID, "message", "two")
	first := e.waitState(s1, kanban.SessionCompleted)
	if first.Error != "" {
		t.Fatalf("evicted session error %q", first.Error)
	}
	e.waitMessage(t1.ID, "status", "free an agent slot")
	e.waitState(s2, kanban.SessionIdle)
	if n := e.runningAgents(); n != 1 {
		t.Fatalf("%d agents run, want 1", n)
	}
}

// TestAgentEnvironmentAndPrepareFailure: the prepare script sees the
// allow-listed environment (never the operator token); a failing prepare
// script fails the session with its output recorded.
func TestAgentEnvironmentAndPrepareFailure(t *testing.T) {
	t.Setenv("KANDEV_TOKEN", "operator-test-token")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/anthropic")
	t.Setenv("UNLISTED_SECRET", "canary-unlisted-4711")
	e := newAgentEnv(t)
	var ex kanban.List[kanban.Executor]
	e.dispatch(kanban.ActionExecutorList, action.ListIn{}, &ex)
	var local string
	for _, x := range ex.Items {
		if x.Name == "exec-local" {
			local = x.ID
		}
	}
	var prof kanban.ExecutorProfile
	e.dispatch(kanban.ActionExecutorProfileCreate, map[string]any{"executor_id": local, "name": "failing",
		"prepare_script": "env | sort\necho preparing\nexit 7"}, &prof)
	task, sid := e.startMock("Prepare task", "@say never", map[string]any{"executor_profile_id": prof.ID})
	s := e.waitState(sid, kanban.SessionFailed)
	if !strings.Contains(s.Error, "prepare script failed") {
		t.Fatalf("error %q", s.Error)
	}
	out := e.waitMessage(task.ID, "error", "preparing")
	if !strings.Contains(out.Content, "ANTHROPIC_BASE_URL=http://127.0.0.1:9/anthropic") || !strings.Contains(out.Content, "PATH=") {
		t.Fatalf("allow-listed variables missing: %s", out.Content)
	}
	for _, leak := range []string{"operator-test-token", "KANDEV_TOKEN", "canary-unlisted-4711"} {
		if strings.Contains(dumpConversation(e.conversation(task.ID)), leak) {
			t.Fatalf("the script saw %s", leak)
		}
	}
	e.waitTask(task.ID, kanban.TaskFailed)
}

// agentSaid reports whether an agent message of the task contains s.
func (e *env) agentSaid(taskID, s string) bool {
	for _, m := range e.conversation(taskID) {
		if m.Type == "message" && strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

// TestWorkflowRunsAgents: a workflow built over MCP — Backlog → In
// Progress (on_enter start_agent with the mock agent; on_turn_complete
// move_to_next once the agent signals) → Review → Done. Moving a task to
// In Progress leads, with no further operator action, to the agent
// running, calling step_complete_kandev, and the task arriving in Review.
func TestWorkflowRunsAgents(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	op := e.operatorMCP()
	mock := e.profileOf("mock-agent").ID
	var wf action.WorkflowOut
	e.decode(e.call(op, "create_workflow_kandev", mustJSON(t, map[string]any{"name": "Agents at work", "steps": []any{
		map[string]any{"name": "Backlog"},
		map[string]any{"name": "In Progress", "prompt": "You are in the In Progress step.", "auto_advance_requires_signal": true,
			"events": map[string]any{
				"on_enter":         []any{map[string]any{"type": "start_agent", "config": map[string]any{"agent_profile_id": mock}}},
				"on_turn_complete": []any{map[string]any{"type": "move_to_next"}},
			}},
		map[string]any{"name": "Review"},
		map[string]any{"name": "Done"},
	}})), &wf)
	var created action.TaskCreateOut
	e.decode(e.call(op, "create_task_kandev", mustJSON(t, map[string]any{"title": "Flowing task", "workflow_id": wf.Workflow.ID,
		"start_agent": false, "prompt": "@say Working on it.\n@tool step_complete_kandev {\"summary\":\"Implemented\"}\n@say Done here."})), &created)
	if created.Task.WorkflowStepID != wf.Steps[0].ID || created.SessionID != "" {
		t.Fatalf("task %+v", created)
	}
	res := e.call(op, "move_task_kandev", mustJSON(t, map[string]any{"task_id": created.Task.ID, "workflow_step_id": wf.Steps[1].ID}))
	if res.IsError {
		t.Fatalf("move: %s", text(res))
	}
	deadline := time.Now().Add(agentWait)
	for e.task(created.Task.ID).WorkflowStepID != wf.Steps[2].ID {
		if time.Now().After(deadline) {
			t.Fatalf("the task never reached Review: %s", dumpConversation(e.conversation(created.Task.ID)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.waitMessage(created.Task.ID, "status", "on_enter of In Progress, start_agent: started session")
	e.waitMessage(created.Task.ID, "tool_call", "step_complete_kandev")
	e.waitMessage(created.Task.ID, "message", "Done here.")
	e.waitMessage(created.Task.ID, "status", "on_turn_complete of In Progress, move_to_next: moved to Review")
	if m := e.waitMessage(created.Task.ID, "prompt", "You are in the In Progress step."); m.Author != "workflow" {
		t.Fatalf("step prompt %+v", m)
	}
}
