package action

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// event is one notification a recorder saw.
type event struct {
	Topic, Name string
	Payload     any
}

// recorder is a Publisher that keeps every notification.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) Publish(topic, name string, payload any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{topic, name, payload})
}

// has reports whether an event name was published on topic.
func (r *recorder) has(topic, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.events, func(e event) bool { return e.Topic == topic && e.Name == name })
}

// testPolicy is a filesystem policy whose one source root is the temp
// base (where tests make their checkouts) and whose data dir is a fresh
// temp dir.
func testPolicy(t *testing.T) *fsguard.Policy {
	t.Helper()
	p, err := fsguard.New(fsguard.Config{Roots: []string{os.TempDir()}, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testDir is dir as a directory the policy accepted.
func testDir(t *testing.T, dir string) fsguard.Dir {
	t.Helper()
	d, err := testPolicy(t).SourceDir("dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// harness is a real store (seeded) with the action registry on top.
type harness struct {
	t     *testing.T
	st    *store.Store
	reg   *Registry
	pub   *recorder
	ws    string // the seeded "Default" workspace
	wf    string // its "Kanban" workflow
	steps []kanban.WorkflowStep
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := Seed(ctx, st); err != nil {
		t.Fatalf("seed: %v", err)
	}
	h := &harness{t: t, st: st, pub: &recorder{}}
	h.reg, _ = mustNew(t, Deps{Store: st, Publisher: h.pub, FS: testPolicy(t)})
	wss, err := st.ListWorkspaces(ctx, kanban.Page{})
	if err != nil || len(wss.Items) != 1 {
		t.Fatalf("seeded workspaces: %v, %v", wss, err)
	}
	h.ws = wss.Items[0].ID
	wfs, err := st.ListWorkflows(ctx, h.ws, kanban.Page{})
	if err != nil || len(wfs.Items) != 1 {
		t.Fatalf("seeded workflows: %v, %v", wfs, err)
	}
	h.wf = wfs.Items[0].ID
	steps, err := st.ListSteps(ctx, h.wf, kanban.Page{})
	if err != nil {
		t.Fatalf("seeded steps: %v", err)
	}
	h.steps = steps.Items
	return h
}

// operator is the operator principal.
var operator = Principal{Kind: Operator}

// payload encodes v; a string is taken as raw JSON.
func payload(t *testing.T, v any) json.RawMessage {
	t.Helper()
	if s, ok := v.(string); ok {
		return json.RawMessage(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode payload: %v", err)
	}
	return b
}

// do dispatches an action and returns its result as JSON.
func (h *harness) do(p Principal, name kanban.Action, in any) (json.RawMessage, error) {
	h.t.Helper()
	out, err := h.reg.Dispatch(context.Background(), p, name, payload(h.t, in))
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		h.t.Fatalf("%s: encode result: %v", name, err)
	}
	return b, nil
}

// call dispatches an action that must succeed and decodes its result.
func call[T any](h *harness, p Principal, name kanban.Action, in any) T {
	h.t.Helper()
	raw, err := h.do(p, name, in)
	if err != nil {
		h.t.Fatalf("%s: got error %v, want success", name, err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		h.t.Fatalf("%s: decode result: %v", name, err)
	}
	return out
}

// refuse dispatches an action that must fail with code and change nothing,
// and returns the error message.
func (h *harness) refuse(p Principal, name kanban.Action, in any, code kanban.Code) string {
	h.t.Helper()
	before := h.snapshot()
	_, err := h.do(p, name, in)
	if err == nil {
		h.t.Fatalf("%s: got success, want %s", name, code)
	}
	e, ok := kanban.AsError(err)
	if !ok || e.Code != code {
		h.t.Fatalf("%s: got error %v, want code %s", name, err, code)
	}
	h.assertUnchanged(before, string(name))
	return e.Message
}

// tables are every table of the schema; snapshots cover all of them.
var tables = []string{"workspaces", "workflows", "workflow_steps", "tasks", "task_dependencies", "repositories",
	"task_repositories", "agents", "agent_profiles", "agent_profile_mcp_configs", "executors", "executor_profiles",
	"task_sessions", "session_messages", "task_plans", "task_plan_revisions", "task_documents",
	"task_document_revisions", "task_artifacts", "questions", "task_pull_requests", "task_pr_automation", "pull_request_events",
	"audit_log", "audit_targets", "routines", "routine_runs"}

// snapshot dumps every row of every table, so a comparison catches
// inserts, deletes and updates.
func (h *harness) snapshot() map[string]string {
	h.t.Helper()
	out := make(map[string]string, len(tables))
	for _, tbl := range tables {
		rows, err := h.st.DB().Query(`SELECT * FROM ` + tbl + ` ORDER BY rowid`)
		if err != nil {
			h.t.Fatalf("snapshot %s: %v", tbl, err)
		}
		cols, _ := rows.Columns()
		var sb strings.Builder
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				h.t.Fatalf("snapshot %s: %v", tbl, err)
			}
			fmt.Fprintf(&sb, "%v\n", vals)
		}
		if err := rows.Err(); err != nil {
			h.t.Fatalf("snapshot %s: %v", tbl, err)
		}
		_ = rows.Close()
		out[tbl] = sb.String()
	}
	return out
}

// assertUnchanged fails unless every table but except is as in before.
func (h *harness) assertUnchanged(before map[string]string, what string, except ...string) {
	h.t.Helper()
	after := h.snapshot()
	for _, tbl := range tables {
		if before[tbl] != after[tbl] && !slices.Contains(except, tbl) {
			h.t.Errorf("%s: table %s changed, want unchanged", what, tbl)
		}
	}
}

// count returns the number of rows of a table.
func (h *harness) count(tbl string) int {
	h.t.Helper()
	var n int
	if err := h.st.DB().QueryRow(`SELECT COUNT(*) FROM ` + tbl).Scan(&n); err != nil {
		h.t.Fatalf("count %s: %v", tbl, err)
	}
	return n
}

// task creates a task in the default workflow through the store.
func (h *harness) task(title string) *kanban.Task {
	h.t.Helper()
	t, _, err := h.st.CreateTask(context.Background(), kanban.TaskCreate{WorkspaceID: h.ws, WorkflowID: h.wf, Title: title})
	if err != nil {
		h.t.Fatalf("create task: %v", err)
	}
	return t
}

// session creates a session on task in mode and returns its principal.
func (h *harness) session(task *kanban.Task, mode kanban.Mode) Principal {
	h.t.Helper()
	sess, _, err := h.st.CreateSession(context.Background(), kanban.SessionCreate{TaskID: task.ID, Mode: mode})
	if err != nil {
		h.t.Fatalf("create session: %v", err)
	}
	return Principal{Kind: Session, SessionID: sess.ID, TaskID: task.ID, WorkspaceID: sess.WorkspaceID}
}

// child creates a subtask of parent through the store.
func (h *harness) child(parent *kanban.Task, title string) *kanban.Task {
	h.t.Helper()
	t, _, err := h.st.CreateTask(context.Background(), kanban.TaskCreate{WorkspaceID: h.ws, WorkflowID: h.wf, ParentID: parent.ID, Title: title})
	if err != nil {
		h.t.Fatalf("create subtask: %v", err)
	}
	return t
}

// sessionState returns a session's stored state.
func (h *harness) sessionState(id string) kanban.SessionState {
	h.t.Helper()
	s, err := h.st.GetSession(context.Background(), id)
	if err != nil {
		h.t.Fatalf("get session: %v", err)
	}
	return s.State
}

// otherBoard creates a second workspace with a workflow, one step and one
// task, for cross-workspace cases.
func (h *harness) otherBoard() (ws *kanban.Workspace, wf *kanban.Workflow, task *kanban.Task) {
	h.t.Helper()
	ctx := context.Background()
	ws, err := h.st.CreateWorkspace(ctx, "Other", "")
	if err != nil {
		h.t.Fatalf("create workspace: %v", err)
	}
	wf, err = h.st.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: "Other flow"})
	if err != nil {
		h.t.Fatalf("create workflow: %v", err)
	}
	if _, err := h.st.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: wf.ID, Name: "Todo", AllowManualMove: true}); err != nil {
		h.t.Fatalf("create step: %v", err)
	}
	task, _, err = h.st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: ws.ID, WorkflowID: wf.ID, Title: "elsewhere"})
	if err != nil {
		h.t.Fatalf("create task: %v", err)
	}
	return ws, wf, task
}

// TestRegistryServesTheDescriptors: the registry registers exactly the
// declared action descriptors, each once (Register panics on a duplicate).
func TestRegistryServesTheDescriptors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	want := slices.Clone(kanban.RegistryActions)
	slices.Sort(want)
	if got := h.reg.Names(); !slices.Equal(got, want) {
		t.Errorf("registered actions: got %v, want %v", got, want)
	}
	if len(slices.Compact(want)) != len(kanban.RegistryActions) {
		t.Errorf("kanban.RegistryActions lists an action twice")
	}
	for _, a := range kanban.ConnectionActions {
		if _, ok := h.reg.Lookup(a); ok {
			t.Errorf("connection action %s: got registered, want answered by the WebSocket server only", a)
		}
	}
}

// mustNew is New for a test: a declaration error fails it.
func mustNew(tb testing.TB, d Deps) (*Registry, *Service) {
	tb.Helper()
	reg, svc, err := New(d)
	if err != nil {
		tb.Fatal(err)
	}
	return reg, svc
}
