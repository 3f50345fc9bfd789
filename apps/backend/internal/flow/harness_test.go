package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// harness is a real SQLite store, the action layer and the engine, with a
// clock the test moves.
type harness struct {
	t   *testing.T
	st  *store.Store
	reg *action.Registry
	svc *action.Service
	eng *Engine
	// events carry the domain events between the action layer and the
	// engine (tests emit agent turns on them as the runtime would).
	events *kanban.DomainEvents
	ws     string
	now    time.Time
	mu     sync.Mutex
	// notified counts the engine's ModeChanged calls by task.
	notified map[string]int
}

// runtime is the harness's agent runtime: it runs no agent and counts the
// mode changes the engine has the Service tell it.
type runtime struct {
	action.NoAgents
	h *harness
}

// ModeChanged records what the engine tells the runtime.
func (r runtime) ModeChanged(taskID string) {
	r.h.mu.Lock()
	defer r.h.mu.Unlock()
	r.h.notified[taskID]++
}

func (h *harness) notifications(taskID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.notified[taskID]
}

// mode returns a task's stored agent mode.
func (h *harness) mode(taskID string) kanban.AgentMode {
	h.t.Helper()
	m, err := h.st.AgentMode(context.Background(), taskID)
	if err != nil {
		h.t.Fatal(err)
	}
	return *m
}

// managedSession gives a task a session the runtime would run, in state st.
func (h *harness) managedSession(taskID string, st kanban.SessionState) *kanban.Session {
	h.t.Helper()
	ctx := context.Background()
	sess, _, err := h.st.CreateSession(ctx, kanban.SessionCreate{TaskID: taskID, Managed: true})
	if err != nil {
		h.t.Fatal(err)
	}
	if sess, _, err = h.st.UpdateRun(ctx, sess.ID, kanban.RunUpdate{State: st}); err != nil {
		h.t.Fatal(err)
	}
	return sess
}

var operator = action.Principal{Kind: action.Operator}

func newHarness(t *testing.T, dir string) *harness {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := action.Seed(ctx, st); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, st: st, now: time.Now(), notified: map[string]int{}, events: &kanban.DomainEvents{}}
	if h.reg, h.svc, err = action.New(action.Deps{Store: st, Agents: runtime{h: h}, Events: h.events}); err != nil {
		t.Fatal(err)
	}
	h.eng = New(t.Context(), Config{Store: st, Service: h.svc, Clock: h.clock, Events: h.events})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.eng.Close(ctx)
	})
	ws, err := st.ListWorkspaces(ctx, kanban.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	h.ws = ws.Items[0].ID
	return h
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

// do runs an action as the operator and decodes its result into out.
func (h *harness) do(name kanban.Action, in, out any) error {
	h.t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		h.t.Fatal(err)
	}
	res, err := h.reg.Dispatch(context.Background(), operator, name, raw)
	if err != nil || out == nil {
		return err
	}
	b, _ := json.Marshal(res)
	return json.Unmarshal(b, out)
}

func (h *harness) must(name kanban.Action, in, out any) {
	h.t.Helper()
	if err := h.do(name, in, out); err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
}

// settle waits until the engine has no work left (bounded).
func (h *harness) settle() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.eng.Busy() {
		if time.Now().After(deadline) {
			h.t.Fatal("the engine never settled")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// workflow creates a workflow from step specs (action.StepSpec JSON) and
// returns its steps in order.
func (h *harness) workflow(steps string) []kanban.WorkflowStep {
	h.t.Helper()
	var out action.WorkflowOut
	h.must(kanban.ActionWorkflowCreate, json.RawMessage(fmt.Sprintf(`{"workspace_id":%q,"name":"W%d","steps":%s}`, h.ws, time.Now().UnixNano(), steps)), &out)
	return out.Steps
}

// task creates a task (no agent) on step.
func (h *harness) task(title string, step kanban.WorkflowStep) *kanban.Task {
	h.t.Helper()
	var out action.TaskCreateOut
	f := false
	h.must(kanban.ActionTaskCreate, action.TaskCreateIn{WorkspaceID: h.ws, WorkflowID: step.WorkflowID, WorkflowStepID: step.ID, Title: title, StartAgent: &f}, &out)
	h.settle()
	return out.Task
}

func (h *harness) get(id string) *kanban.Task {
	h.t.Helper()
	t, err := h.st.GetTask(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return t
}

func (h *harness) move(taskID, stepID string) error {
	return h.do(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: taskID, WorkflowStepID: stepID}, nil)
}

// records returns the workflow's messages in a task's conversation.
func (h *harness) records(taskID string) []string {
	h.t.Helper()
	l, err := h.st.ListMessages(context.Background(), kanban.MessageFilter{TaskID: taskID, Limit: 200})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, m := range l.Items {
		if m.Author == "workflow" && (m.Type == "status" || m.Type == "error") {
			out = append(out, m.Type+": "+m.Content)
		}
	}
	return out
}

func (h *harness) hasRecord(taskID, want string) bool {
	for _, r := range h.records(taskID) {
		if strings.Contains(r, want) {
			return true
		}
	}
	return false
}

func (h *harness) sessions(taskID string) []kanban.Session {
	h.t.Helper()
	l, err := h.st.ListSessions(context.Background(), taskID, kanban.Page{Limit: 50})
	if err != nil {
		h.t.Fatal(err)
	}
	return l.Items
}

// ev is one step event's automations as JSON.
func ev(event, automations string) string {
	return fmt.Sprintf(`{%q:[%s]}`, event, automations)
}

func (h *harness) setNow(t time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = t
}
