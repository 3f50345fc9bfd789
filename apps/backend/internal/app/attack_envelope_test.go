package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// Issue 24, attack 5 (envelopes), on the real backend with a task
// session's token: the error for an unknown action carried the caller's
// action name back ("<script>"), and any request id up to 128 bytes was
// carried back whatever its characters. No reply field now holds a
// caller value that is not a registered action or a safe id, and a
// refused request changes nothing.
func TestAttackWebSocketEnvelopeEchoesNoCallerValue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	conn, resp, err := websocket.DefaultDialer.Dial(e.wsURL(), http.Header{"Authorization": {"Bearer " + s.Token}})
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	roundTrip := func(frame any) (ws.Message, string) {
		t.Helper()
		if err := conn.WriteJSON(frame); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, raw, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var m ws.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m, string(raw)
	}
	before := e.fingerprint()
	for _, action := range []string{"<script>alert('CANARY')</script>", "task.get<CANARY>", "CANARY"} {
		m, raw := roundTrip(map[string]any{"id": "r1", "type": "request", "action": action, "payload": map[string]string{"id": "self"}})
		var p ws.ErrorPayload
		_ = json.Unmarshal(m.Payload, &p)
		if m.Type != ws.TypeError || p.Code != kanban.CodeUnknownAction || m.Action != "" || m.ID != "r1" || strings.Contains(raw, "CANARY") {
			t.Fatalf("unknown action %q: got %s, want UNKNOWN_ACTION with id r1, an empty action and no caller text", action, raw)
		}
	}
	for _, id := range []string{"<img src=x onerror=CANARY>", strings.Repeat("C", 129) + "CANARY", "CANARY\u0000", "CANARY id"} {
		m, raw := roundTrip(map[string]any{"id": id, "type": "request", "action": "task.list", "payload": map[string]string{}})
		var p ws.ErrorPayload
		_ = json.Unmarshal(m.Payload, &p)
		if m.Type != ws.TypeError || p.Code != kanban.CodeBadRequest || m.ID != "" || strings.Contains(raw, "CANARY") {
			t.Fatalf("request id %q: got %s, want BAD_REQUEST without the id", id, raw)
		}
	}
	if e.fingerprint() != before {
		t.Fatal("the refused requests changed the database")
	}
	// A registered action with a safe id is carried back.
	m, raw := roundTrip(map[string]any{"id": "b-7:x.y_z", "type": "request", "action": "task.list", "payload": map[string]string{}})
	if m.Type != ws.TypeResponse || m.ID != "b-7:x.y_z" || m.Action != string(kanban.ActionTaskList) {
		t.Fatalf("got %s, want the task.list response with its id and action", raw)
	}
}
