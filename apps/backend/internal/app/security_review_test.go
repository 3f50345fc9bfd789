package app

// Regression tests from a hostile review. Each test FAILS while the bug it
// names is present; see the comment on each test for the reproduction.

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// A task-mode session may not read the plan of a task outside its tree
// (plan.get is FORBIDDEN), but subscribing to its own workspace topic
// streams every plan.updated / document.updated event of the workspace,
// content included.
func TestReviewWorkspaceSubscriptionDoesNotLeakPlansOutsideTree(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mine := e.newTask("Mine")
	other := e.newTask("Unrelated")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: mine.ID}, &created)

	leaked := make(chan string, 16)
	sc, err := ws.Dial(context.Background(), ws.ClientConfig{URL: e.wsURL(), Token: created.Token,
		OnNotification: func(a string, p json.RawMessage) {
			select {
			case leaked <- a + " " + string(p):
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Close() })
	ctx := context.Background()
	if err := sc.Call(ctx, kanban.ActionPlanGet, map[string]any{"task_id": other.ID}, nil); !isCode(err, kanban.CodeForbidden) {
		t.Fatalf("precondition: plan.get of an unrelated task should be FORBIDDEN, got %v", err)
	}
	// Sessions follow only their own session topic: workspace events carry
	// plans and documents beyond a session's reach.
	if err := sc.Call(ctx, kanban.ActionSubscribe, SubscribeIn{Topics: []string{action.WorkspaceTopic(created.Session.WorkspaceID)}}, nil); !isCode(err, kanban.CodeForbidden) {
		t.Fatalf("subscribe to the workspace: got %v, want FORBIDDEN", err)
	}
	if err := sc.Call(ctx, kanban.ActionSubscribe, SubscribeIn{Topics: []string{action.SessionTopic(created.Session.ID)}}, nil); err != nil {
		t.Fatalf("subscribe to its own session: %v", err)
	}
	e.dispatch(kanban.ActionPlanCreate, action.PlanCreateIn{TaskID: other.ID, Content: "TOP-SECRET-PLAN-sk-live-CANARY"}, nil)
	deadline := time.After(3 * time.Second)
	for {
		select {
		case p := <-leaked:
			if strings.Contains(p, "TOP-SECRET-PLAN") {
				t.Fatalf("a session received the plan of a task outside its tree through its workspace subscription: %s", p)
			}
		case <-deadline:
			return
		}
	}
}

// Rotating a session's token (kandev session token) must cut off the old
// token, including connections already open with it.
func TestReviewRotatedTokenStopsOpenConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mine := e.newTask("Mine")
	victim := e.newTask("Victim")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: mine.ID}, &created)
	old := e.wsClient(created.Token, nil)
	ctx := context.Background()
	if err := old.Call(ctx, kanban.ActionSessionProfile, action.NoIn{}, nil); err != nil {
		t.Fatalf("precondition: %v", err)
	}
	e.dispatch(kanban.ActionSessionToken, action.IDIn{ID: created.Session.ID}, nil)
	err := old.Call(ctx, kanban.ActionTaskDelete, map[string]any{"task_id": victim.ID}, nil)
	if err == nil {
		t.Fatal("a connection authenticated with a rotated (revoked) session token still deleted a task")
	}
}

// Deleting a task deletes its sessions; a connection of such a deleted
// session must not keep acting in the workspace.
func TestReviewDeletedSessionCannotAct(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mine := e.newTask("Mine")
	victim := e.newTask("Victim")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: mine.ID}, &created)
	zombie := e.wsClient(created.Token, nil)
	ctx := context.Background()
	if err := zombie.Call(ctx, kanban.ActionSessionProfile, action.NoIn{}, nil); err != nil {
		t.Fatalf("precondition: %v", err)
	}
	e.dispatch(kanban.ActionTaskDelete, action.TaskRefIn{TaskID: mine.ID}, nil)
	if _, err := e.b.store.GetSession(ctx, created.Session.ID); err == nil {
		t.Fatal("precondition: the session should be gone with its task")
	}
	err := zombie.Call(ctx, kanban.ActionTaskUpdate, map[string]any{"task_id": victim.ID, "title": "zombie was here"}, nil)
	if err == nil {
		t.Fatal("a deleted session's open connection still updated another task")
	}
}

// stop_task puts a child's sessions in CANCELLED; the stopped session's
// token must no longer act.
func TestReviewStoppedSessionCannotAct(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	parent := e.sessionMCP(kanban.ModeTask, "")
	child := subtaskOf(e, parent.TaskID, "Child")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: child.ID}, &created)
	r := e.call(parent.Client, "stop_task_kandev", `{"task_id":"`+child.ID+`"}`)
	if r.IsError {
		t.Fatalf("stop_task: %s", text(r))
	}
	s, err := e.b.store.GetSession(context.Background(), created.Session.ID)
	if err != nil || s.State != kanban.SessionCancelled {
		t.Fatalf("precondition: session state %v %v", s, err)
	}
	// The token the stopped agent still holds no longer authenticates.
	if c, err := ws.Dial(context.Background(), ws.ClientConfig{URL: e.wsURL(), Token: created.Token}); err == nil {
		_ = c.Close()
		t.Fatal("a CANCELLED (stopped) session's token still connects")
	} else if !ws.IsUnauthorized(err) {
		t.Fatalf("got %v, want UNAUTHORIZED", err)
	}
}

// Modes decide what a session may do: an office-mode session has no
// task-lifecycle, create-task or task-update tools, yet its token deletes
// and creates tasks through the WebSocket API (only config actions are
// gated by mode).
func TestReviewOfficeSessionCannotUseTaskLifecycleOverWS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mine := e.newTask("Office task")
	victim := e.newTask("Victim")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: mine.ID, Mode: kanban.ModeOffice}, &created)
	c := e.wsClient(created.Token, nil)
	before := e.fingerprint()
	err := c.Call(context.Background(), kanban.ActionTaskDelete, map[string]any{"task_id": victim.ID}, nil)
	if err == nil || e.fingerprint() != before {
		t.Fatal("an office-mode session deleted a task over the WebSocket API, beyond its mode's tools")
	}
}

// create_task_kandev's start_when_unblocked promises: "Start the agent only
// once every blocking task is completed". With an open blocker the task is
// created with a session (and its prompt delivered) at once.
func TestReviewStartWhenUnblockedDefersTheSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	blocker := e.newTask("Blocker")
	var out action.TaskCreateOut
	var profiles kanban.List[kanban.AgentProfile]
	e.dispatch(kanban.ActionAgentProfileList, map[string]any{}, &profiles)
	chosen := profiles.Items[len(profiles.Items)-1] // not the default agent's profile
	callJSON(e, c, "create_task_kandev", `{"title":"Waits","prompt":"go","blocked_by":["`+blocker.ID+`"],"start_when_unblocked":true,"agent_profile_id":"`+chosen.ID+`"}`, &out)
	if out.SessionID != "" {
		t.Fatalf("a session (%s) was started although the task is blocked and start_when_unblocked is true", out.SessionID)
	}
	l, err := e.b.store.ListSessions(context.Background(), out.Task.ID, kanban.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 0 {
		t.Fatalf("%d session(s) exist on a task that must wait for its blockers", len(l.Items))
	}
	// Completing the blocker starts the deferred session with the prompt.
	var done kanban.Task
	callJSON(e, c, "update_task_state_kandev", `{"task_id":"`+blocker.ID+`","state":"COMPLETED"}`, &done)
	l, err = e.b.store.ListSessions(context.Background(), out.Task.ID, kanban.Page{Limit: 10})
	if err != nil || len(l.Items) != 1 || l.Items[0].AgentProfileID != chosen.ID {
		t.Fatalf("after the blocker completed: got %+v (%v), want 1 session with the named profile", l.Items, err)
	}
	msgs, err := e.b.store.ListMessages(context.Background(), kanban.MessageFilter{TaskID: out.Task.ID})
	if err != nil || len(msgs.Items) != 1 || msgs.Items[0].Content != "go" {
		t.Fatalf("got conversation %+v (%v), want the prompt", msgs, err)
	}
}

// JSON Schema counts 1.0 as an integer, so the advertised schemas accept
// it; the backend then refuses it ("payload.limit: expected integer", a
// path the agent never sent) or, for ask_user_question, fails with an
// internal error.
func TestReviewIntegralFloatsAcceptedLikeTheSchemaSays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	r := e.call(s.Client, "list_tasks_kandev", `{"limit":1.0}`)
	if r.IsError {
		t.Errorf("list_tasks_kandev {limit:1.0}: schema-valid call refused: %s", text(r))
	}
	r = e.call(s.Client, "ask_user_question_kandev",
		`{"questions":[{"prompt":"Q?","options":[{"label":"A","description":"a"},{"label":"B","description":"b"}]}],"timeout_seconds":1.0}`)
	if strings.Contains(text(r), "internal error") {
		t.Errorf("ask_user_question_kandev {timeout_seconds:1.0}: %s", text(r))
	}
}

// The advertised schema says created_since has format date-time, but the
// validator does not assert formats: a call with a bad created_since and
// a bad limit reports only the limit; the agent needs a second retry.
func TestReviewEveryProblemReportedWithFormat(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	r := e.call(c, "list_pending_questions_kandev", `{"created_since":"not-a-time","limit":0}`)
	msg := text(r)
	if !r.IsError || !strings.Contains(msg, "/limit") || !strings.Contains(msg, "/created_since") {
		t.Fatalf("want both /created_since and /limit reported, got %q", msg)
	}
}

// MCP spec (Streamable HTTP): servers MUST validate Origin and answer 403
// to an invalid one (DNS rebinding). /mcp only checks Host.
func TestReviewExternalMCPRefusesForeignOrigin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, e.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Origin", "http://evil.example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign Origin got %d, want 403", res.StatusCode)
	}
}

// A workflow holds at most kanban.MaxWorkflowSteps steps however they are
// created, so every exported workflow can be imported again.
func TestReviewExportImportRoundTripsLongWorkflows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	var wf action.WorkflowOut
	e.dispatch(kanban.ActionWorkflowCreate, map[string]any{"name": "Long", "steps": []any{map[string]any{"name": "s0"}}}, &wf)
	for i := 1; i < kanban.MaxWorkflowSteps; i++ {
		e.dispatch(kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf.Workflow.ID, "name": "s" + strings.Repeat("x", i)}, nil)
	}
	err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf.Workflow.ID, "name": "one too many"}, nil)
	if !isCode(err, kanban.CodeConflict) {
		t.Fatalf("step 51: got %v, want CONFLICT", err)
	}
	r := e.call(c, "export_workflow_kandev", `{"workflow_id":"`+wf.Workflow.ID+`"}`)
	if r.IsError {
		t.Fatalf("export: %s", text(r))
	}
	other, err := e.b.store.CreateWorkspace(context.Background(), "Other", "")
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"workspace_id": other.ID, "document": text(r)})
	r = e.call(c, "import_workflow_kandev", string(args))
	if r.IsError || !strings.Contains(text(r), `"created":["Long"]`) {
		t.Fatalf("re-importing an exported workflow with %d steps failed: %s", kanban.MaxWorkflowSteps, text(r))
	}
}

// A schema-valid plan (200,000 characters, under maxLength 524288) is
// refused through kandev mcp with "request too large": control characters
// are escaped six-fold and the WebSocket request cap is 1 MiB bytes.
func TestReviewSchemaValidPlanFitsThroughTheBridge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	args, _ := json.Marshal(map[string]any{"content": strings.Repeat("\x01", 200000)})
	r := e.call(s.Client, "create_task_plan_kandev", string(args))
	if r.IsError {
		t.Fatalf("schema-valid create_task_plan_kandev refused: %s", text(r))
	}
}

func isCode(err error, code kanban.Code) bool {
	ke, ok := kanban.AsError(err)
	return ok && ke.Code == code
}

// A valid get_task_conversation_kandev page (limit 200, every message
// within its 100,000-character bound) can exceed the bridge's 16 MiB read
// limit once JSON-escaped: the WebSocket to the backend is closed (1009)
// and the agent is told "UNAVAILABLE: backend unavailable; retry", which
// fails again on every retry (and kills the other calls in flight).
func TestReviewLargeValidPageDoesNotKillTheBridge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reader := e.sessionMCP(kanban.ModeTask, "")
	target := e.newTask("Chatty")
	sid := bareSession(e, target.ID)
	body := strings.Repeat("\x01", 100000) // stored 100 kB, 600 kB as JSON
	for i := 0; i < 30; i++ {
		if _, err := e.b.store.AppendMessage(context.Background(), kanban.Message{SessionID: sid, Author: "user", Type: "prompt", Content: body}); err != nil {
			t.Fatal(err)
		}
	}
	r := e.call(reader.Client, "get_task_conversation_kandev", `{"task_id":"`+target.ID+`","limit":200}`)
	if r.IsError && strings.Contains(text(r), "UNAVAILABLE") {
		t.Fatalf("a schema-valid page broke the bridge connection: %s", text(r))
	}
}

// A session cannot pile up unanswered questions without bound.
func TestPendingQuestionsBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	items := []kanban.QuestionItem{{Prompt: "Q?", Options: []kanban.QuestionOption{{Label: "A", Description: "a"}, {Label: "B", Description: "b"}}}}
	for range 10 {
		if _, _, err := e.b.store.CreateQuestion(context.Background(), kanban.Question{SessionID: s.ID, Questions: items}, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := e.counts()
	r := e.call(s.Client, "ask_user_question_kandev", `{"questions":[{"prompt":"Q?","options":[{"label":"A","description":"a"},{"label":"B","description":"b"}]}],"timeout_seconds":1}`)
	if !r.IsError || text(r) != "CONFLICT: this session already has 10 unanswered questions; wait for answers before asking more" {
		t.Fatalf("got %q, want the pending-questions CONFLICT", text(r))
	}
	if !maps.Equal(e.counts(), before) {
		t.Fatal("a refused question was stored")
	}
}

// After its token is rotated, a connected session MCP server's calls fail
// with a clear UNAUTHORIZED error (not a misleading "retry").
func TestRotatedTokenSessionMCPSaysUnauthorized(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	if r := e.call(s.Client, "list_tasks_kandev", `{}`); r.IsError {
		t.Fatalf("precondition: %s", text(r))
	}
	e.dispatch(kanban.ActionSessionToken, action.IDIn{ID: s.ID}, nil)
	if r := e.call(s.Client, "list_tasks_kandev", `{}`); !r.IsError || !strings.HasPrefix(text(r), "UNAUTHORIZED: ") {
		t.Fatalf("first call after rotation: got %q, want UNAUTHORIZED", text(r))
	}
	if r := e.call(s.Client, "list_tasks_kandev", `{}`); !r.IsError || !strings.HasPrefix(text(r), "UNAUTHORIZED: ") {
		t.Fatalf("second call after rotation: got %q, want UNAUTHORIZED", text(r))
	}
}

// The bounds the MCP schemas advertise for step and executor settings hold
// on the WebSocket API too, so anything stored can be written back or
// re-imported through MCP unchanged.
func TestSettingBoundsHoldOnEveryTransport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var wfs kanban.List[kanban.Workflow]
	e.dispatch(kanban.ActionWorkflowList, map[string]any{"workspace_id": e.workspaceID()}, &wfs)
	var exs kanban.List[kanban.Executor]
	e.dispatch(kanban.ActionExecutorList, map[string]any{}, &exs)
	many := map[string]any{}
	for i := 0; i <= kanban.MaxExecutorConfigKeys; i++ {
		many["k"+strconv.Itoa(i)] = i
	}
	tooManyActions := make([]any, kanban.MaxStepActions+1)
	for i := range tooManyActions {
		tooManyActions[i] = map[string]any{"type": "archive"}
	}
	wf := wfs.Items[0].ID
	cases := []struct {
		name    string
		action  kanban.Action
		payload map[string]any
		want    string
	}{
		{"wip over", kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf, "name": "a", "wip_limit": kanban.MaxWIPLimit + 1}, "invalid arguments for create_workflow_step_kandev: /wip_limit: must be <= 10000 (maximum)"},
		{"archive over", kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf, "name": "a", "auto_archive_after_hours": kanban.MaxAutoArchiveHours + 1}, "invalid arguments for create_workflow_step_kandev: /auto_archive_after_hours: must be <= 87600 (maximum)"},
		{"heartbeat over", kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf, "name": "a", "heartbeat_minutes": kanban.MaxHeartbeatMinutes + 1}, "invalid arguments for create_workflow_step_kandev: /heartbeat_minutes: must be <= 10080 (maximum)"},
		{"too many automations", kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf, "name": "a", "events": map[string]any{"on_enter": tooManyActions}}, "invalid arguments for create_workflow_step_kandev: /events/*: more than 20 items (maxItems)"},
		{"unknown automation type", kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf, "name": "a", "events": map[string]any{"on_enter": []any{map[string]any{"type": "CANARY-x"}}}}, "invalid arguments for create_workflow_step_kandev: /events/*/0/type: must be one of: start_agent,"},
		{"bad automation setting key", kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf, "name": "a", "events": map[string]any{"on_enter": []any{map[string]any{"type": "archive", "config": map[string]any{"sk-live CANARY!": 1}}}}}, "invalid arguments for create_workflow_step_kandev: unknown field at /events/*/0/config; no fields allowed"},
		{"too many executor settings", kanban.ActionExecutorProfileCreate, map[string]any{"executor_id": exs.Items[0].ID, "name": "p", "config": many}, "invalid arguments for create_executor_profile_kandev: /config: more than 100 properties (maxProperties)"},
	}
	g := e.guardWrites()
	defer g.finish("refused settings")
	for _, tc := range cases {
		err := e.tryDispatch(action.Principal{Kind: action.Operator}, tc.action, tc.payload, nil)
		ke, ok := kanban.AsError(err)
		if !ok || ke.Code != kanban.CodeValidation || !strings.Contains(ke.Message, tc.want) || strings.Contains(ke.Message, "CANARY") {
			t.Errorf("%s: got %v, want VALIDATION_ERROR containing %q", tc.name, err, tc.want)
		}
		g.unchanged(tc.name)
	}
}
