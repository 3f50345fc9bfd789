package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// subtaskOf creates a task under parentID as the operator (no agent).
func subtaskOf(e *env, parentID, title string) *kanban.Task {
	e.t.Helper()
	var out action.TaskCreateOut
	f := false
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: title, ParentID: parentID, StartAgent: &f}, &out)
	return out.Task
}

// bareSession creates a session on a task without an MCP server.
func bareSession(e *env, taskID string) string {
	e.t.Helper()
	var out action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: taskID}, &out)
	return out.Session.ID
}

// foreignTask creates a second workspace with a workflow and a task in it.
func foreignTask(e *env) *kanban.Task {
	e.t.Helper()
	var ws kanban.Workspace
	e.dispatch(kanban.ActionWorkspaceCreate, action.WorkspaceCreateIn{Name: "Elsewhere"}, &ws)
	var wf action.WorkflowOut
	e.dispatch(kanban.ActionWorkflowCreate, map[string]any{"workspace_id": ws.ID, "name": "Flow", "steps": []any{map[string]any{"name": "Todo"}}}, &wf)
	var out action.TaskCreateOut
	f := false
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{WorkspaceID: ws.ID, Title: "foreign", StartAgent: &f}, &out)
	return out.Task
}

// boardSteps returns the steps of a task's workflow in board order.
func boardSteps(e *env, taskID string) []kanban.WorkflowStep {
	e.t.Helper()
	t, err := e.b.store.GetTask(context.Background(), taskID)
	if err != nil {
		e.t.Fatal(err)
	}
	l, err := e.b.store.ListSteps(context.Background(), t.WorkflowID, kanban.Page{})
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

func TestTaskLifecycleTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	steps := boardSteps(e, s.TaskID)
	var moved kanban.Task
	callJSON(e, s.Client, "move_task_kandev", fmt.Sprintf(`{"task_id":"self","workflow_step_id":%q,"position":0}`, steps[1].ID), &moved)
	if got := dbStr(e, `SELECT workflow_step_id FROM tasks WHERE id = ?`, s.TaskID); got != steps[1].ID || moved.Position != 0 {
		t.Fatalf("move: got step %s position %d, want %s at 0", got, moved.Position, steps[1].ID)
	}
	limit := 1
	e.dispatch(kanban.ActionWorkflowStepUpdate, action.StepUpdateIn{StepID: steps[2].ID, WIPLimit: &limit}, nil)
	occupant := subtaskOf(e, s.TaskID, "occupant")
	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: occupant.ID, WorkflowStepID: steps[2].ID}, nil)
	refused(e, s.Client, "move_task_kandev", fmt.Sprintf(`{"task_id":"self","workflow_step_id":%q}`, steps[2].ID),
		"CONFLICT: step wip_limit reached (1 tasks)")

	var a1, a2 kanban.Task
	callJSON(e, s.Client, "archive_task_kandev", fmt.Sprintf(`{"task_id":%q}`, occupant.ID), &a1)
	callJSON(e, s.Client, "archive_task_kandev", fmt.Sprintf(`{"task_id":%q}`, occupant.ID), &a2)
	if a1.ArchivedAt == nil || a2.ArchivedAt == nil || !a1.ArchivedAt.Equal(*a2.ArchivedAt) {
		t.Fatalf("archive twice: got %v then %v, want the same archived_at", a1.ArchivedAt, a2.ArchivedAt)
	}

	kid := subtaskOf(e, s.TaskID, "doomed")
	bareSession(e, kid.ID)
	e.dispatch(kanban.ActionPlanCreate, action.PlanCreateIn{TaskID: kid.ID, Content: "plan"}, nil)
	var del struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}
	callJSON(e, s.Client, "delete_task_kandev", fmt.Sprintf(`{"task_id":%q}`, kid.ID), &del)
	for _, tbl := range []string{"tasks WHERE id", "task_sessions WHERE task_id", "task_plans WHERE task_id"} {
		if n := dbInt(e, `SELECT COUNT(*) FROM `+tbl+` = ?`, kid.ID); n != 0 || !del.Deleted {
			t.Fatalf("after delete: %d rows in %s, want 0", n, tbl)
		}
	}
	refused(e, s.Client, "delete_task_kandev", fmt.Sprintf(`{"task_id":%q}`, s.TaskID), "FORBIDDEN: a session cannot delete its own task")
	refused(e, s.Client, "delete_task_kandev", `{"task_id":"gone"}`, "NOT_FOUND: task not found")

	foreign := foreignTask(e)
	for _, tool := range []string{"archive_task_kandev", "delete_task_kandev"} {
		refused(e, s.Client, tool, fmt.Sprintf(`{"task_id":%q}`, foreign.ID), "FORBIDDEN: task is outside this session's workspace")
	}
	refused(e, s.Client, "move_task_kandev", fmt.Sprintf(`{"task_id":%q,"workflow_step_id":%q}`, foreign.ID, steps[0].ID),
		"FORBIDDEN: task is outside this session's workspace")
}

func TestUpdateTaskTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	var got kanban.Task
	callJSON(e, s.Client, "update_task_kandev", `{"task_id":"self","title":"Renamed","description":"New prompt","state":"IN_PROGRESS"}`, &got)
	row := dbStr(e, `SELECT title || '|' || description || '|' || state FROM tasks WHERE id = ?`, s.TaskID)
	if row != "Renamed|New prompt|IN_PROGRESS" {
		t.Fatalf("task row: got %q, want the three updated fields", row)
	}
	callJSON(e, s.Client, "update_task_kandev", `{"task_id":"self","state":"review"}`, &got)
	if got.Title != "Renamed" || got.Description != "New prompt" || got.State != kanban.TaskReview {
		t.Fatalf("partial update with a state alias: got %+v, want only the state changed, to REVIEW", got)
	}
	callJSON(e, s.Client, "update_task_kandev", `{"task_id":"self","prompt":"Legacy prompt"}`, &got)
	if d := dbStr(e, `SELECT description FROM tasks WHERE id = ?`, s.TaskID); d != "Legacy prompt" || got.Description != d {
		t.Fatalf("legacy prompt: got description %q (result %q), want it stored as the description", d, got.Description)
	}

	// deferred_launch_prompt: only a task still waiting on its blockers to
	// start its agent; once an agent started, refused with nothing changed.
	var waiting action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: "waiting", ParentID: s.TaskID, BlockedBy: []string{e.newTask("blocker").ID}, StartWhenUnblocked: ptr(true)}, &waiting)
	callJSON(e, s.Client, "update_task_kandev", fmt.Sprintf(`{"task_id":%q,"deferred_launch_prompt":"later"}`, waiting.Task.ID), &got)
	if lp := dbStr(e, `SELECT launch_prompt FROM tasks WHERE id = ?`, waiting.Task.ID); lp != "later" {
		t.Fatalf("deferred launch prompt: got %q, want later", lp)
	}
	refused(e, s.Client, "update_task_kandev", `{"task_id":"self","title":"Not applied","deferred_launch_prompt":"x"}`,
		"CONFLICT: deferred_launch_prompt applies only to a task still waiting on its blockers to start its agent; send new context with message_task_kandev instead")
	refused(e, s.Client, "update_task_kandev", fmt.Sprintf(`{"task_id":%q,"title":"x"}`, foreignTask(e).ID),
		"FORBIDDEN: task is outside this session's workspace")
}

func TestConversationTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	second := bareSession(e, s.TaskID)
	ctx := context.Background()
	for i, m := range []kanban.Message{
		{SessionID: s.ID, Author: "user", Type: "prompt", Content: "m0"},
		{SessionID: s.ID, Author: "agent", Type: "message", Content: "m1"},
		{SessionID: s.ID, Author: "agent", Type: "status", Content: "m2"},
		{SessionID: second, Author: "user", Type: "prompt", Content: "m3"},
		{SessionID: second, Author: "agent", Type: "message", Content: "m4"},
	} {
		if _, err := e.b.store.AppendMessage(ctx, m); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	type page struct {
		Items      []kanban.Message `json:"items"`
		NextCursor string           `json:"next_cursor"`
	}
	contents := func(p page) string {
		s := ""
		for _, m := range p.Items {
			s += m.Content + " "
		}
		return s
	}
	var p1, p2, p3 page
	callJSON(e, s.Client, "get_task_conversation_kandev", `{"task_id":"self","limit":2}`, &p1)
	callJSON(e, s.Client, "get_task_conversation_kandev", `{"task_id":"self","limit":2,"after":"`+p1.NextCursor+`"}`, &p2)
	if contents(p1) != "m0 m1 " || contents(p2) != "m2 m3 " || p2.NextCursor == "" {
		t.Fatalf("ascending pages: got %q then %q, want m0 m1 then m2 m3", contents(p1), contents(p2))
	}
	callJSON(e, s.Client, "get_task_conversation_kandev", `{"task_id":"self","sort":"desc","limit":3}`, &p3)
	if contents(p3) != "m4 m3 m2 " {
		t.Fatalf("descending: got %q, want m4 m3 m2", contents(p3))
	}
	callJSON(e, s.Client, "get_task_conversation_kandev", `{"task_id":"self","sort":"desc","before":"`+p3.NextCursor+`"}`, &p3)
	if contents(p3) != "m1 m0 " {
		t.Fatalf("descending continued: got %q, want m1 m0", contents(p3))
	}
	callJSON(e, s.Client, "get_task_conversation_kandev", `{"task_id":"self","message_types":["prompt","status"],"session_id":"`+s.ID+`"}`, &p1)
	if contents(p1) != "m0 m2 " {
		t.Fatalf("filtered: got %q, want m0 m2", contents(p1))
	}
	var sessions struct {
		Items []kanban.Session `json:"items"`
	}
	callJSON(e, s.Client, "list_task_sessions_kandev", `{"task_id":"self"}`, &sessions)
	if len(sessions.Items) != 2 || sessions.Items[0].ID != second || sessions.Items[1].ID != s.ID {
		t.Fatalf("sessions: got %+v, want the newer session first", sessions.Items)
	}
	foreign := foreignTask(e)
	refused(e, s.Client, "get_task_conversation_kandev", fmt.Sprintf(`{"task_id":%q}`, foreign.ID), "FORBIDDEN: task is outside this session's workspace")
	refused(e, s.Client, "list_task_sessions_kandev", fmt.Sprintf(`{"task_id":%q}`, foreign.ID), "FORBIDDEN: task is outside this session's workspace")
	refused(e, s.Client, "get_task_conversation_kandev", `{"task_id":"self","before":"!!"}`, "VALIDATION_ERROR: before: is not a valid cursor")
}

func TestCoordinationTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	parent := e.sessionMCP(kanban.ModeTask, "")
	stranger := e.sessionMCP(kanban.ModeTask, "")
	kid := subtaskOf(e, parent.TaskID, "kid")
	refused(e, parent.Client, "message_task_kandev", fmt.Sprintf(`{"task_id":%q,"prompt":"hello"}`, kid.ID),
		"CONFLICT: the task has no running session; spawn a new session on it first")

	var spawned struct {
		Session      kanban.Session      `json:"session"`
		AgentProfile kanban.AgentProfile `json:"agent_profile"`
	}
	callJSON(e, parent.Client, "spawn_session_kandev", fmt.Sprintf(`{"task_id":%q,"prompt":"start here"}`, kid.ID), &spawned)
	if spawned.Session.TaskID != kid.ID || spawned.AgentProfile.ID == "" || spawned.AgentProfile.ID != spawned.Session.AgentProfileID {
		t.Fatalf("spawn: got %+v, want a session on the kid with its effective agent profile", spawned)
	}
	if got := dbStr(e, `SELECT content FROM session_messages WHERE session_id = ?`, spawned.Session.ID); got != "start here" {
		t.Fatalf("spawned session's first message: got %q, want the prompt", got)
	}

	var sent action.TaskMessageOut
	callJSON(e, stranger.Client, "message_task_kandev", fmt.Sprintf(`{"task_id":%q,"prompt":"FYI"}`, kid.ID), &sent)
	if sent.SessionID != spawned.Session.ID || sent.DeliveryMode != "queued" {
		t.Fatalf("queued message: got %+v, want it on the spawned session", sent)
	}
	row := dbStr(e, `SELECT author || '|' || type FROM session_messages WHERE id = ?`, sent.Message.ID)
	if row != "task:"+stranger.TaskID+"|prompt" {
		t.Fatalf("stored message: got %q, want a prompt by the sending task", row)
	}
	callJSON(e, stranger.Client, "message_task_kandev", fmt.Sprintf(`{"task_id":%q,"session_id":%q,"prompt":"to you"}`, kid.ID, spawned.Session.ID), &sent)
	if sent.SessionID != spawned.Session.ID {
		t.Fatalf("message to session_id: got %+v, want it on %s", sent, spawned.Session.ID)
	}
	refused(e, stranger.Client, "message_task_kandev", fmt.Sprintf(`{"task_id":%q,"session_id":%q,"prompt":"x"}`, kid.ID, stranger.ID),
		"NOT_FOUND: session_id: no such session on this task")
	refused(e, stranger.Client, "message_task_kandev", fmt.Sprintf(`{"task_id":%q,"prompt":"stop!","delivery_mode":"interrupt"}`, kid.ID),
		"FORBIDDEN: only the task's direct parent may interrupt it; use delivery_mode queued")
	callJSON(e, parent.Client, "message_task_kandev", fmt.Sprintf(`{"task_id":%q,"prompt":"change course","delivery_mode":"interrupt"}`, kid.ID), &sent)

	refused(e, stranger.Client, "stop_task_kandev", fmt.Sprintf(`{"task_id":%q}`, kid.ID), "FORBIDDEN: a session may only stop its direct child tasks")
	var stopped action.TaskStopOut
	callJSON(e, parent.Client, "stop_task_kandev", fmt.Sprintf(`{"task_id":%q,"reason":"done elsewhere"}`, kid.ID), &stopped)
	if len(stopped.StoppedSessionIDs) != 1 || dbStr(e, `SELECT state FROM task_sessions WHERE id = ?`, spawned.Session.ID) != "CANCELLED" {
		t.Fatalf("stop: got %+v, want the spawned session CANCELLED", stopped)
	}
	refused(e, parent.Client, "message_task_kandev", fmt.Sprintf(`{"task_id":%q,"prompt":"anyone?"}`, kid.ID),
		"CONFLICT: the task has no running session; spawn a new session on it first")
	// Without task_id a session spawns on its own task; name labels it.
	callJSON(e, parent.Client, "spawn_session_kandev", `{"name":"reviewer","prompt":"review it"}`, &spawned)
	if spawned.Session.TaskID != parent.TaskID || spawned.Session.Name != "reviewer" ||
		dbStr(e, `SELECT name FROM task_sessions WHERE id = ?`, spawned.Session.ID) != "reviewer" {
		t.Fatalf("spawn on the own task: got %+v, want a session named reviewer on %s", spawned.Session, parent.TaskID)
	}
	foreign := foreignTask(e)
	refused(e, parent.Client, "spawn_session_kandev", fmt.Sprintf(`{"task_id":%q}`, foreign.ID), "FORBIDDEN: task is outside this session's workspace")
	refused(e, parent.Client, "message_task_kandev", fmt.Sprintf(`{"task_id":%q,"prompt":"x"}`, foreign.ID), "FORBIDDEN: task is outside this session's workspace")
}

func TestDependencyAndRelatedTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root := e.newTask("root")
	me := subtaskOf(e, root.ID, "me")
	sib := subtaskOf(e, root.ID, "sibling")
	kid := subtaskOf(e, me.ID, "kid")
	s := e.sessionMCP(kanban.ModeTask, me.ID)

	var dep kanban.TaskDependency
	callJSON(e, s.Client, "add_task_dependency_kandev", fmt.Sprintf(`{"depends_on_task_id":%q}`, sib.ID), &dep)
	callJSON(e, s.Client, "add_task_dependency_kandev", fmt.Sprintf(`{"task_id":"self","depends_on_task_id":%q}`, sib.ID), &dep)
	if n := dbInt(e, `SELECT COUNT(*) FROM task_dependencies WHERE task_id = ? AND depends_on_task_id = ?`, me.ID, sib.ID); n != 1 {
		t.Fatalf("dependency rows: got %d, want 1", n)
	}
	refused(e, s.Client, "add_task_dependency_kandev", `{"depends_on_task_id":"self"}`, "VALIDATION_ERROR: depends_on_task_id: a task cannot depend on itself")
	refused(e, s.Client, "add_task_dependency_kandev", fmt.Sprintf(`{"task_id":%q,"depends_on_task_id":%q}`, sib.ID, me.ID),
		"FORBIDDEN: a session may only change its own task's dependencies")
	refused(e, s.Client, "add_task_dependency_kandev", fmt.Sprintf(`{"depends_on_task_id":%q}`, foreignTask(e).ID), "FORBIDDEN: task is outside this session's workspace")
	e.dispatch(kanban.ActionTaskDependencyAdd, action.DependencyIn{TaskID: kid.ID, DependsOnTaskID: me.ID}, nil)

	var rel action.RelatedOut
	callJSON(e, s.Client, "list_related_tasks_kandev", `{}`, &rel)
	if rel.Parent == nil || rel.Parent.ID != root.ID || len(rel.Children) != 1 || rel.Children[0].ID != kid.ID ||
		len(rel.Siblings) != 1 || rel.Siblings[0].ID != sib.ID || len(rel.Blockers) != 1 || rel.Blockers[0].ID != sib.ID ||
		len(rel.Blocked) != 1 || rel.Blocked[0].ID != kid.ID {
		t.Fatalf("related: got %+v, want root / kid / sibling / blocker sibling / blocked kid", rel)
	}
	subtaskOf(e, root.ID, "another sibling")
	callJSON(e, s.Client, "list_related_tasks_kandev", `{"limit":1,"verbose":true}`, &rel)
	if len(rel.Siblings) != 1 || len(rel.Truncated) != 1 || rel.Truncated[0] != "siblings" || rel.Task.Description == nil {
		t.Fatalf("related limit 1: got siblings %d truncated %v, want 1 and [siblings] with descriptions", len(rel.Siblings), rel.Truncated)
	}

	var removed struct {
		Deleted bool `json:"deleted"`
	}
	callJSON(e, s.Client, "remove_task_dependency_kandev", fmt.Sprintf(`{"depends_on_task_id":%q}`, sib.ID), &removed)
	callJSON(e, s.Client, "remove_task_dependency_kandev", fmt.Sprintf(`{"depends_on_task_id":%q}`, sib.ID), &removed)
	if n := dbInt(e, `SELECT COUNT(*) FROM task_dependencies WHERE task_id = ?`, me.ID); n != 0 || !removed.Deleted {
		t.Fatalf("after remove twice: %d edges, want 0", n)
	}
}

func TestPlanTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root := e.newTask("root")
	me := subtaskOf(e, root.ID, "me")
	sib := subtaskOf(e, root.ID, "sibling")
	s := e.sessionMCP(kanban.ModeTask, me.ID)
	var p kanban.Plan
	callJSON(e, s.Client, "create_task_plan_kandev", `{"title":"Plan","content":"1. read"}`, &p)
	refused(e, s.Client, "create_task_plan_kandev", `{"content":"again"}`, "CONFLICT: the task already has a plan; update it instead")
	callJSON(e, s.Client, "update_task_plan_kandev", `{"task_id":"self","content":"1. read\n2. write"}`, &p)
	if p.Revision != 2 || p.Title != "Plan" || dbInt(e, `SELECT COUNT(*) FROM task_plan_revisions WHERE task_id = ?`, me.ID) != 2 {
		t.Fatalf("update: got %+v, want revision 2 keeping the title and two stored revisions", p)
	}
	callJSON(e, s.Client, "get_task_plan_kandev", `{}`, &p)
	if p.Content != "1. read\n2. write" {
		t.Fatalf("get: got %q", p.Content)
	}
	callJSON(e, s.Client, "create_task_plan_kandev", fmt.Sprintf(`{"task_id":%q,"content":"root plan"}`, root.ID), &p)
	refused(e, s.Client, "create_task_plan_kandev", fmt.Sprintf(`{"task_id":%q,"content":"x"}`, sib.ID),
		"FORBIDDEN: a session's plans are limited to its task, the task's ancestors, its descendants and the tasks it created")
	refused(e, s.Client, "get_task_plan_kandev", fmt.Sprintf(`{"task_id":%q}`, foreignTask(e).ID), "FORBIDDEN: task is outside this session's workspace")
	var del struct {
		Deleted bool `json:"deleted"`
	}
	callJSON(e, s.Client, "delete_task_plan_kandev", `{}`, &del)
	if n := dbInt(e, `SELECT COUNT(*) FROM task_plans WHERE task_id = ?`, me.ID); n != 0 {
		t.Fatalf("after delete: %d plans, want 0", n)
	}
	refused(e, s.Client, "get_task_plan_kandev", `{}`, "NOT_FOUND: plan not found")
}
