package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// Tests of several backends on one PostgreSQL database: each backend is a
// real one (its own data dir, HTTP server, WebSocket API and runtime),
// all sharing the operator token, as a team runs them behind a load
// balancer.

// Short leases, so that takeover tests wait about a second.
const (
	testBeat = 100 * time.Millisecond
	testTTL  = 800 * time.Millisecond
)

// twoBackends starts two backends that run agents on one new database.
func twoBackends(t *testing.T, opts ...func(*Config)) (*env, *env) {
	t.Helper()
	u := pgtest.Database(t)
	shared := func(c *Config) { c.Database, c.LeaseBeat, c.LeaseTTL = u, testBeat, testTTL }
	a := newAgentEnv(t, append([]func(*Config){shared}, opts...)...)
	b := newAgentEnv(t, append([]func(*Config){shared}, opts...)...)
	return a, b
}

// notes collects a WebSocket client's notifications by action.
type notes struct {
	mu  sync.Mutex
	got map[string][]json.RawMessage
}

func (n *notes) add(a string, p json.RawMessage) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got[a] = append(n.got[a], p)
}

// ids returns the "id" of every payload of action a.
func (n *notes) ids(a string) map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]int{}
	for _, p := range n.got[a] {
		var v struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(p, &v) == nil {
			out[v.ID]++
		}
	}
	return out
}

// subscribe connects an operator WebSocket client to e, subscribed to
// topics, and returns what it hears.
func (e *env) subscribe(topics ...string) *notes {
	e.t.Helper()
	n := &notes{got: map[string][]json.RawMessage{}}
	c, err := ws.Dial(context.Background(), ws.ClientConfig{URL: e.wsURL(), Token: e.token, OnNotification: n.add})
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	if err := c.Call(context.Background(), kanban.ActionSubscribe, SubscribeIn{Topics: topics}, nil); err != nil {
		e.t.Fatalf("subscribe: %v", err)
	}
	return n
}

// board returns the default workspace and its Kanban workflow's steps.
func (e *env) board() (string, []kanban.WorkflowStep) {
	e.t.Helper()
	var wss kanban.List[kanban.Workspace]
	e.dispatch(kanban.ActionWorkspaceList, action.ListIn{}, &wss)
	var wfs kanban.List[kanban.Workflow]
	e.dispatch(kanban.ActionWorkflowList, map[string]any{"workspace_id": wss.Items[0].ID}, &wfs)
	var steps kanban.List[kanban.WorkflowStep]
	e.dispatch(kanban.ActionWorkflowStepList, map[string]any{"workflow_id": wfs.Items[0].ID}, &steps)
	return wss.Items[0].ID, steps.Items
}

// TestBackendsShareOneBoard: writers on two backends create and move
// tasks on the same steps at once. Every task created on one backend is
// announced to the other's subscribers, positions stay a permutation of
// 0..n-1 on every step, and the wip limit holds.
func TestBackendsShareOneBoard(t *testing.T) {
	t.Parallel()
	a, b := twoBackends(t)
	ws, steps := a.board()
	const wip = 4
	a.dispatch(kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": steps[1].ID, "wip_limit": wip}, nil)
	heardOnA, heardOnB := a.subscribe(action.WorkspaceTopic(ws)), b.subscribe(action.WorkspaceTopic(ws))
	const writers, each = 2, 25
	var (
		wg      sync.WaitGroup
		refused atomic.Int32
	)
	no := false
	for w := range 2 * writers {
		e := []*env{a, b}[w%2]
		wg.Go(func() {
			var last string
			for i := range each {
				var out action.TaskCreateOut
				e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: fmt.Sprintf("w%d-%d", w, i), StartAgent: &no}, &out)
				if last != "" {
					pos := i % 3
					err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionTaskMove,
						action.TaskMoveIn{TaskID: last, WorkflowStepID: steps[i%3].ID, Position: &pos}, nil)
					if kanban.ErrorCode(err) == kanban.CodeConflict {
						refused.Add(1)
					} else if err != nil {
						t.Errorf("move: %v", err)
					}
				}
				last = out.Task.ID
			}
		})
	}
	wg.Wait()
	total := 2 * writers * each
	waitFor(t, func() bool {
		return len(heardOnA.ids(kanban.EventTaskCreated.Name())) == total && len(heardOnB.ids(kanban.EventTaskCreated.Name())) == total
	})
	for id, n := range heardOnA.ids(kanban.EventTaskCreated.Name()) {
		if n != 1 {
			t.Fatalf("task %s announced %d times on backend A, want once", id, n)
		}
	}
	for _, st := range steps {
		var l kanban.List[kanban.Task]
		b.dispatch(kanban.ActionTaskList, action.TaskListIn{WorkspaceID: ws, WorkflowStepID: st.ID, Limit: kanban.MaxLimit}, &l)
		for i, task := range l.Items {
			if task.Position != i {
				t.Fatalf("step %s: task %d of %d has position %d, want %d", st.Name, i, len(l.Items), task.Position, i)
			}
		}
		if st.ID == steps[1].ID && len(l.Items) > wip {
			t.Fatalf("got %d tasks on a step with wip_limit %d", len(l.Items), wip)
		}
	}
	t.Logf("%d tasks, %d moves refused by the wip limit; transactions run again: %d + %d",
		total, refused.Load(), a.b.store.TxRetries(), b.b.store.TxRetries())
}

// TestModeSwitchAcrossBackends: the operator switches, through backend
// B, the mode of a session whose MCP server is attached to backend A; the
// server rebuilds its tools at once, with one list_changed.
func TestModeSwitchAcrossBackends(t *testing.T) {
	t.Parallel()
	a, b := twoBackends(t)
	s := a.sessionMCP(kanban.ModeTask, "")
	var changed atomic.Int32
	s.Client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/tools/list_changed" {
			changed.Add(1)
		}
	})
	if names := toolNames(t, s.Client); !names["create_task_kandev"] {
		t.Fatalf("task mode tools: got %v", names)
	}
	b.dispatch(kanban.ActionSessionSetMode, map[string]any{"id": s.ID, "mode": kanban.ModeConfig}, nil)
	waitFor(t, func() bool { return changed.Load() >= 1 })
	if names := toolNames(t, s.Client); names["create_task_kandev"] || !names["create_workflow_kandev"] {
		t.Fatalf("config mode tools after the switch on B: got %v", names)
	}
}

// TestQuestionAnsweredOnOtherBackend: an agent's question asked through
// backend A is answered through backend B, and the blocked call on A
// returns the answer.
func TestQuestionAnsweredOnOtherBackend(t *testing.T) {
	t.Parallel()
	a, b := twoBackends(t)
	s := a.sessionMCP(kanban.ModeTask, "")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "ask_user_question_kandev"
		req.Params.Arguments = json.RawMessage(`{"questions":[{"id":"db","prompt":"Which database?",` +
			`"options":[{"label":"Postgres","description":"server"},{"label":"SQLite","description":"embedded"}]}],"timeout_seconds":60}`)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := s.Client.CallTool(ctx, req)
		if err != nil {
			t.Errorf("ask: %v", err)
		}
		done <- r
	}()
	q := pendingQuestionOf(b, s.ID)
	var ans action.QuestionAnswerOut
	b.dispatch(kanban.ActionQuestionAnswer, action.QuestionAnswerIn{PendingID: q.ID, Answers: []kanban.Answer{{QuestionID: "db", SelectedOptions: []string{"q1_opt1"}}}}, &ans)
	if !ans.Claimed {
		t.Fatal("answer on B: got claimed=false, want the first answer to win")
	}
	select {
	case r := <-done:
		var got askResult
		if err := json.Unmarshal([]byte(text(r)), &got); err != nil || got.Status != "answered" || len(got.Answers) != 1 || got.Answers[0].SelectedOptions[0] != "q1_opt1" {
			t.Fatalf("ask on A returned %s, want the answer given on B", text(r))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the question asked on A still waits 10s after B answered it")
	}
}

// TestPermissionResolvedOnOtherBackend: an agent run by backend A asks
// for a permission; the operator resolves it through backend B, and the
// agent on A goes on.
func TestPermissionResolvedOnOtherBackend(t *testing.T) {
	t.Parallel()
	a, b := twoBackends(t)
	task, sid := a.startMock("Permission task", "@permission Deploy to staging\n@say Deployed.", nil)
	b.waitState(sid, kanban.SessionWaitingForInput)
	var pending kanban.List[kanban.Permission]
	b.dispatch(kanban.ActionPermissionList, action.PermissionListIn{TaskID: task.ID}, &pending)
	if len(pending.Items) != 1 {
		t.Fatalf("pending permissions on B: %+v", pending.Items)
	}
	p := pending.Items[0]
	var out action.PermissionResolveOut
	b.dispatch(kanban.ActionPermissionResolve, action.PermissionResolveIn{TaskID: task.ID, SessionID: sid, RequestID: p.ID,
		PendingID: p.PendingID, OptionID: "allow"}, &out)
	if !out.Claimed {
		t.Fatalf("resolve on B: %+v", out)
	}
	a.waitMessage(task.ID, "message", "Deployed.")
	b.waitState(sid, kanban.SessionIdle)
	if a.runningAgents() != 1 || b.runningAgents() != 0 {
		t.Fatalf("got %d agents on A and %d on B, want the one agent on A, which launched it", a.runningAgents(), b.runningAgents())
	}
}

// TestPromptDeliveredAcrossBackends: a message queued to a session
// through backend B reaches the agent that backend A runs.
func TestPromptDeliveredAcrossBackends(t *testing.T) {
	t.Parallel()
	a, b := twoBackends(t)
	task, sid := a.startMock("Delivery task", "@say first", nil)
	a.waitState(sid, kanban.SessionIdle)
	b.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@say delivered from B"}, nil)
	a.waitMessage(task.ID, "message", "delivered from B")
	b.dispatch(kanban.ActionSessionStop, action.SessionStopIn{ID: sid}, nil)
	a.waitState(sid, kanban.SessionCancelled)
	a.waitNoAgents()
}

// TestAutoArchiveRunsOnceAcrossBackends: two backends sweep for due tasks
// every few milliseconds; each due task is archived once, by one of them
// (one "Archived automatically" note each), under the sweep's advisory
// lock.
func TestAutoArchiveRunsOnceAcrossBackends(t *testing.T) {
	t.Parallel()
	later := func(c *Config) {
		c.ArchiveSweep = 5 * time.Millisecond
		c.Clock = func() time.Time { return time.Now().Add(2 * time.Hour) }
	}
	a, b := twoBackends(t, later)
	ws, steps := a.board()
	review := steps[2]
	a.dispatch(kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": review.ID, "auto_archive_after_hours": 1}, nil)
	no := false
	var ids []string
	for i := range 30 {
		var out action.TaskCreateOut
		[]*env{a, b}[i%2].dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: fmt.Sprintf("due %d", i), WorkflowStepID: review.ID,
			StartAgent: &no}, &out)
		ids = append(ids, out.Task.ID)
	}
	notes := func(id string) int {
		n := 0
		for _, m := range a.conversation(id) {
			if strings.Contains(m.Content, "Archived automatically") {
				n++
			}
		}
		return n
	}
	waitFor(t, func() bool {
		for _, id := range ids {
			if notes(id) == 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(100 * time.Millisecond) // more sweeps on both, which must find nothing due
	for _, id := range ids {
		if n := notes(id); n != 1 {
			t.Fatalf("task %s: got %d auto-archive notes, want exactly 1", id, n)
		}
	}
	var l kanban.List[kanban.Task]
	a.dispatch(kanban.ActionTaskList, action.TaskListIn{WorkspaceID: ws, WorkflowStepID: review.ID, Limit: kanban.MaxLimit}, &l)
	if len(l.Items) != 0 {
		t.Fatalf("got %d live tasks left on the auto-archiving step, want none", len(l.Items))
	}
}
