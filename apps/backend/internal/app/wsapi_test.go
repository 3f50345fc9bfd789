package app

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

func (e *env) wsURL() string { return "ws" + strings.TrimPrefix(e.url, "http") + "/ws" }

// wsClient dials the WebSocket API with tok; notifications go to notes.
func (e *env) wsClient(tok string, notes chan<- string) *ws.Client {
	e.t.Helper()
	c, err := ws.Dial(context.Background(), ws.ClientConfig{URL: e.wsURL(), Token: tok, OnNotification: func(a string, _ json.RawMessage) {
		if notes != nil {
			notes <- a
		}
	}})
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestWebSocketBoardFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	notes := make(chan string, 16)
	c := e.wsClient(e.token, notes)
	ctx := context.Background()
	var wsl kanban.List[kanban.Workspace]
	if err := c.Call(ctx, kanban.ActionWorkspaceList, nil, &wsl); err != nil || len(wsl.Items) != 1 {
		t.Fatalf("workspace.list: %v %+v", err, wsl)
	}
	if err := c.Call(ctx, kanban.ActionSubscribe, SubscribeIn{Topics: []string{action.WorkspaceTopic(wsl.Items[0].ID)}}, nil); err != nil {
		t.Fatal(err)
	}
	var created action.TaskCreateOut
	if err := c.Call(ctx, kanban.ActionTaskCreate, map[string]any{"title": "Board task", "start_agent": false}, &created); err != nil {
		t.Fatal(err)
	}
	var wfs kanban.List[kanban.Workflow]
	if err := c.Call(ctx, kanban.ActionWorkflowList, map[string]any{"workspace_id": wsl.Items[0].ID}, &wfs); err != nil {
		t.Fatal(err)
	}
	var steps kanban.List[kanban.WorkflowStep]
	if err := c.Call(ctx, kanban.ActionWorkflowStepList, map[string]any{"workflow_id": wfs.Items[0].ID}, &steps); err != nil {
		t.Fatal(err)
	}
	var moved kanban.Task
	if err := c.Call(ctx, kanban.ActionTaskMove, map[string]any{"task_id": created.Task.ID, "workflow_step_id": steps.Items[1].ID, "position": 0}, &moved); err != nil {
		t.Fatal(err)
	}
	if moved.WorkflowStepID != steps.Items[1].ID || moved.Position != 0 {
		t.Fatalf("got %+v, want the task on step 2 at 0", moved)
	}
	want := []string{kanban.EventTaskCreated.Name(), kanban.EventTaskMoved.Name()}
	for _, w := range want {
		select {
		case got := <-notes:
			if got != w {
				t.Fatalf("got notification %s, want %s", got, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s notification", w)
		}
	}
}

// TestWebSocketRejections: each bad input gets its code, the message names
// fields (never values) and nothing is written.
func TestWebSocketRejections(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	op := e.wsClient(e.token, nil)
	task := e.newTask("Mine")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, &created)
	sess := e.wsClient(created.Token, nil)
	var other kanban.Workspace
	e.dispatch(kanban.ActionWorkspaceCreate, map[string]any{"name": "Other"}, &other)
	e.dispatch(kanban.ActionWorkflowCreate, map[string]any{"workspace_id": other.ID, "name": "Other board", "steps": []map[string]any{{"name": "Todo"}}}, nil)
	var foreign action.TaskCreateOut
	f := false
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{WorkspaceID: other.ID, Title: "Foreign", StartAgent: &f}, &foreign)
	cases := []struct {
		name    string
		c       *ws.Client
		action  kanban.Action
		payload any
		code    kanban.Code
		msgHas  string
	}{
		{"unknown action", op, "task.explode", map[string]any{}, kanban.CodeUnknownAction, "unknown action"},
		{"unknown field", op, kanban.ActionTaskCreate, map[string]any{"title": "x", "sk-live-CANARY": 1}, kanban.CodeValidation, "invalid arguments for create_task_kandev: unknown field at /; allowed:"},
		{"case-mismatched field", op, kanban.ActionTaskCreate, map[string]any{"Title": "x"}, kanban.CodeValidation, `unknown field at /; allowed:`},
		{"wrong type", op, kanban.ActionTaskCreate, map[string]any{"title": 5}, kanban.CodeValidation, "invalid arguments for create_task_kandev: /title: expected string"},
		{"title too long", op, kanban.ActionTaskCreate, map[string]any{"title": strings.Repeat("x", 61), "start_agent": false}, kanban.CodeValidation, "title: longer than 60 characters"},
		{"bad state", op, kanban.ActionTaskSetState, map[string]any{"task_id": task.ID, "state": "sk-live-CANARY"}, kanban.CodeValidation, "state"},
		{"session calls operator action", sess, kanban.ActionWorkspaceCreate, map[string]any{"name": "x"}, kanban.CodeForbidden, "not available to this session"},
		{"session sets its mode", sess, kanban.ActionSessionSetMode, map[string]any{"id": created.Session.ID, "mode": "config"}, kanban.CodeForbidden, "not available to this session"},
		{"cross-workspace task", sess, kanban.ActionTaskUpdate, map[string]any{"task_id": foreign.Task.ID, "title": "hijack"}, kanban.CodeForbidden, "outside this session's workspace"},
		{"cross-workspace subscribe", sess, kanban.ActionSubscribe, map[string]any{"topics": []string{action.WorkspaceTopic(other.ID)}}, kanban.CodeForbidden, "only subscribe"},
		{"operator asks a question", op, kanban.ActionQuestionAsk, map[string]any{}, kanban.CodeForbidden, "only available to agent sessions"},
		{"self-dependency", sess, kanban.ActionTaskDependencyAdd, map[string]any{"depends_on_task_id": "self"}, kanban.CodeValidation, "cannot depend on itself"},
		// Actions no tool serves unchanged are checked by their own contract (refusals name the action).
		{"declared: unknown field", op, kanban.ActionTaskGet, map[string]any{"id": task.ID, "sk-live-CANARY": 1}, kanban.CodeValidation, "invalid arguments for task.get: unknown field at /; allowed: id"},
		{"declared: bad mode", op, kanban.ActionSessionSetMode, map[string]any{"id": created.Session.ID, "mode": "sk-live-CANARY"}, kanban.CodeValidation, "invalid arguments for session.set_mode: /mode:"},
		{"declared: name too long", op, kanban.ActionWorkspaceCreate, map[string]any{"name": strings.Repeat("n", kanban.MaxNameLen+1)}, kanban.CodeValidation, "invalid arguments for workspace.create: /name:"},
		{"declared: bad topic", op, kanban.ActionSubscribe, map[string]any{"topics": []string{"sk-live-CANARY"}}, kanban.CodeValidation, "invalid arguments for subscribe: /topics/0:"},
		{"declared: unknown artifact kind", op, kanban.ActionArtifactCreate, map[string]any{"task_id": task.ID, "kind": "sk-live-CANARY", "data": map[string]any{}}, kanban.CodeValidation, "invalid arguments for artifact.create:"},
		{"declared: walkthrough off its tool's schema", op, kanban.ActionArtifactCreate, map[string]any{"task_id": task.ID, "kind": kanban.ArtifactWalkthrough, "data": map[string]any{"steps": "x"}}, kanban.CodeValidation, "invalid arguments for artifact.create:"},
	}
	g := e.guardWrites()
	defer g.finish("refused WebSocket requests")
	for _, tc := range cases {
		err := tc.c.Call(context.Background(), tc.action, tc.payload, nil)
		ke, ok := kanban.AsError(err)
		if !ok || ke.Code != tc.code || !strings.Contains(ke.Message, tc.msgHas) {
			t.Errorf("%s: got %v, want %s containing %q", tc.name, err, tc.code, tc.msgHas)
			continue
		}
		if strings.Contains(ke.Message, "CANARY") || strings.Contains(ke.Message, "hijack") {
			t.Errorf("%s: message echoes a caller value: %q", tc.name, ke.Message)
		}
		g.unchanged(tc.name)
	}
}

func TestWebSocketAuthAndFrames(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tok := range []string{"", "wrong"} {
		h := http.Header{}
		if tok != "" {
			h.Set("Authorization", "Bearer "+tok)
		}
		_, resp, err := websocket.DefaultDialer.Dial(e.wsURL(), h)
		if resp != nil {
			_ = resp.Body.Close()
		}
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("token %q: got %v %v, want 401 with WWW-Authenticate", tok, err, resp)
		}
	}
	h := http.Header{"Authorization": {"Bearer " + e.token}}
	conn, resp, err := websocket.DefaultDialer.Dial(e.wsURL(), h)
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	before := e.fingerprint()
	for _, frame := range []string{`not json`, `{"id":"1","type":"response","action":"task.list"}`, `{"type":"request","action":"task.list"}`} {
		if err := conn.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		var m ws.Message
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		var p ws.ErrorPayload
		_ = json.Unmarshal(m.Payload, &p)
		if m.Type != "error" || p.Code != kanban.CodeBadRequest {
			t.Fatalf("frame %q: got %+v %+v, want BAD_REQUEST", frame, m, p)
		}
	}
	big := `{"id":"1","type":"request","action":"task.create","payload":{"title":"` + strings.Repeat("x", 9<<20) + `"}}`
	_ = conn.WriteMessage(websocket.TextMessage, []byte(big))
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err = conn.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("got %v, want close 1009", err)
	}
	if e.fingerprint() != before {
		t.Fatal("rejected frames changed the database")
	}
}

// TestWebSocketConcurrentCreates: 8 clients × 500 creates lose nothing.
func TestWebSocketConcurrentCreates(t *testing.T) {
	if testing.Short() {
		t.Skip("1000 creates")
	}
	t.Parallel()
	e := newEnv(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		c := e.wsClient(e.token, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 125 {
				if err := c.Call(context.Background(), kanban.ActionTaskCreate, map[string]any{"title": "t" + strconv.Itoa(i), "start_agent": false}, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("create failed: %v", err)
	}
	// Positions are stored as sparse sort keys: 1000 appends hold the keys
	// of ranks 0..999, one each.
	var n, distinct int
	var maxKey int64
	row := e.b.store.DB().QueryRow(`SELECT COUNT(*), COUNT(DISTINCT position), MAX(position) FROM tasks`)
	if err := row.Scan(&n, &distinct, &maxKey); err != nil {
		t.Fatal(err)
	}
	if n != 1000 || distinct != 1000 || maxKey != store.TaskKey(999) {
		t.Fatalf("got %d rows, %d distinct positions, max key %d; want 1000, 1000, %d", n, distinct, maxKey, store.TaskKey(999))
	}
}
