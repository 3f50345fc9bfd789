package ws

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const goodToken = "good-token"

type testPrincipal struct{ name string }

// toyActions are the actions the toy serves (ServerConfig.Known).
var toyActions = []kanban.Action{"echo", "whoami", kanban.ActionSubscribe, "block", "fail.domain", "fail.wrapped",
	"fail.plain", "panic", "unmarshalable"}

// toy is a Dispatch with a handful of actions and a call counter.
type toy struct {
	calls   atomic.Int64
	started chan string   // receives the action of each blocking request
	release chan struct{} // closed to let "block" return
}

func newToy() *toy {
	return &toy{started: make(chan string, 64), release: make(chan struct{})}
}

func (d *toy) dispatch(ctx context.Context, c *Conn, action kanban.Action, payload json.RawMessage) (any, error) {
	d.calls.Add(1)
	switch action {
	case "echo":
		return payload, nil
	case "whoami":
		return map[string]string{"name": c.Principal().(*testPrincipal).name}, nil
	case kanban.ActionSubscribe:
		var p struct{ Topics []string }
		if err := json.Unmarshal(payload, &p); err != nil {
			return nil, kanban.Errorf(kanban.CodeValidation, "topics must be a list of strings")
		}
		c.Subscribe(p.Topics...)
		return map[string][]string{"topics": c.Topics()}, nil
	case "block":
		d.started <- string(action)
		select {
		case <-d.release:
			return map[string]bool{"released": true}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "fail.domain":
		return nil, &kanban.Error{Code: kanban.CodeNotFound, Message: "task not found", Field: "task_id"}
	case "fail.wrapped":
		return nil, errors.Join(errors.New("context"), kanban.Errorf(kanban.CodeConflict, "step is full"))
	case "fail.plain":
		return nil, errors.New("open /secret/db.sqlite: disk on fire")
	case "panic":
		panic("secret panic detail")
	case "unmarshalable":
		return map[string]any{"f": func() {}}, nil
	}
	return nil, kanban.Errorf(kanban.CodeUnknownAction, "unknown action")
}

func authenticate(_ context.Context, token string) (Principal, error) {
	if strings.HasPrefix(token, goodToken) {
		return &testPrincipal{name: strings.TrimPrefix(token, goodToken)}, nil
	}
	return nil, kanban.Errorf(kanban.CodeUnauthorized, "bad token")
}

// startServer runs a Server on 127.0.0.1:0; cfg's nil functions get the
// toy and the test authenticator. It returns the ws:// URL.
func startServer(t *testing.T, cfg ServerConfig, d *toy) (*Server, string) {
	t.Helper()
	if cfg.Authenticate == nil {
		cfg.Authenticate = authenticate
	}
	if cfg.Dispatch == nil {
		cfg.Dispatch = d.dispatch
	}
	if cfg.Known == nil {
		cfg.Known = func(a kanban.Action) bool { return slices.Contains(toyActions, a) }
	}
	s := NewServer(cfg)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	t.Cleanup(s.Close) // runs first: hijacked conns are not tracked by ts
	return s, "ws" + strings.TrimPrefix(ts.URL, "http")
}

func dialRaw(t *testing.T, url, token string) *websocket.Conn {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + token}}
	c, resp, err := websocket.DefaultDialer.Dial(url, h)
	if err != nil {
		t.Fatalf("dial: got %v, want nil", err)
	}
	closeBody(t, resp)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func closeBody(t *testing.T, resp *http.Response) {
	t.Helper()
	if resp != nil && resp.Body != nil {
		if err := resp.Body.Close(); err != nil {
			t.Errorf("close body: %v", err)
		}
	}
}

func writeJSON(t *testing.T, c *websocket.Conn, s string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
		t.Fatalf("write: got %v, want nil", err)
	}
}

func readMsg(t *testing.T, c *websocket.Conn) Message {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: got %v, want a message", err)
	}
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("read: got %q, want JSON: %v", data, err)
	}
	return m
}

func errPayload(t *testing.T, m Message) ErrorPayload {
	t.Helper()
	if m.Type != TypeError {
		t.Fatalf("type: got %q (%s), want error", m.Type, m.Payload)
	}
	var p ErrorPayload
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		t.Fatalf("error payload: %v", err)
	}
	return p
}

// echoOK checks the connection still serves requests.
func echoOK(t *testing.T, c *websocket.Conn) {
	t.Helper()
	writeJSON(t, c, `{"id":"ping-1","type":"request","action":"echo","payload":{"ok":true}}`)
	m := readMsg(t, c)
	if m.Type != TypeResponse || m.ID != "ping-1" || string(m.Payload) != `{"ok":true}` {
		t.Fatalf("echo: got %+v (%s), want response ping-1 {\"ok\":true}", m, m.Payload)
	}
}

func TestRequestReplies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, action, payload string
		wantType, wantCode    string
		wantIn, wantNotIn     string // substrings of the reply payload
	}{
		{name: "echo", action: "echo", payload: `{"a":[1,2]}`, wantType: TypeResponse, wantIn: `{"a":[1,2]}`},
		{name: "principal", action: "whoami", wantType: TypeResponse, wantIn: `"alice"`},
		{name: "domain error keeps code", action: "fail.domain", wantType: TypeError, wantCode: "NOT_FOUND", wantIn: `"field":"task_id"`},
		{name: "wrapped domain error", action: "fail.wrapped", wantType: TypeError, wantCode: "CONFLICT", wantIn: "step is full"},
		{name: "plain error hidden", action: "fail.plain", wantType: TypeError, wantCode: "INTERNAL_ERROR", wantIn: "internal error (ref ", wantNotIn: "secret"},
		{name: "panic hidden", action: "panic", wantType: TypeError, wantCode: "INTERNAL_ERROR", wantIn: "ref", wantNotIn: "secret"},
		{name: "unmarshalable result", action: "unmarshalable", wantType: TypeError, wantCode: "INTERNAL_ERROR"},
		{name: "unknown action", action: "nope", wantType: TypeError, wantCode: "UNKNOWN_ACTION", wantNotIn: "nope"},
	}
	_, url := startServer(t, ServerConfig{}, newToy())
	c := dialRaw(t, url, goodToken+"alice")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := "r-" + strings.ReplaceAll(tc.name, " ", "-")
			req := `{"id":"` + id + `","type":"request","action":"` + tc.action + `"`
			if tc.payload != "" {
				req += `,"payload":` + tc.payload
			}
			writeJSON(t, c, req+"}")
			m := readMsg(t, c)
			wantAction := tc.action // an unknown action is caller text: not carried back
			if !slices.Contains(toyActions, kanban.Action(tc.action)) {
				wantAction = ""
			}
			if m.ID != id || m.Action != wantAction || m.Type != tc.wantType {
				t.Fatalf("got id=%q action=%q type=%q, want %q %q %q", m.ID, m.Action, m.Type, id, wantAction, tc.wantType)
			}
			if tc.wantCode != "" {
				if p := errPayload(t, m); string(p.Code) != tc.wantCode {
					t.Errorf("code: got %s, want %s", p.Code, tc.wantCode)
				}
			}
			if !strings.Contains(string(m.Payload), tc.wantIn) {
				t.Errorf("payload: got %s, want it to contain %q", m.Payload, tc.wantIn)
			}
			if tc.wantNotIn != "" && strings.Contains(string(m.Payload), tc.wantNotIn) {
				t.Errorf("payload: got %s, want no %q", m.Payload, tc.wantNotIn)
			}
		})
	}
}

func TestMalformedFrames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		frame         string
		binary        bool
		wantID        string
		wantMsg       string // substring of the error message
		wantNotInResp string
	}{
		{name: "not json", frame: `{"id":`, wantMsg: "malformed message"},
		{name: "json array", frame: `[1]`, wantMsg: "malformed message"},
		{name: "json null", frame: `null`, wantMsg: "malformed message"},
		{name: "invalid utf8", frame: "{\"id\":\"a\xff\",\"type\":\"request\",\"action\":\"echo\"}", wantMsg: "malformed message"},
		{name: "binary frame", frame: `{"id":"b","type":"request","action":"echo"}`, binary: true, wantMsg: "malformed message"},
		{name: "response type", frame: `{"id":"x1","type":"response","action":"echo"}`, wantID: "x1", wantMsg: "expected a request"},
		{name: "missing type", frame: `{"id":"x2","action":"echo"}`, wantID: "x2", wantMsg: "expected a request"},
		{name: "missing id", frame: `{"type":"request","action":"echo"}`, wantMsg: "request id is required"},
		{name: "numeric id", frame: `{"id":7,"type":"request","action":"echo"}`, wantMsg: "request id must be a string"},
		{name: "id too long", frame: `{"id":"` + strings.Repeat("i", 129) + `","type":"request","action":"echo"}`, wantMsg: "request id must be 1 to 128", wantNotInResp: "iiii"},
		{name: "missing action", frame: `{"id":"x3","type":"request"}`, wantID: "x3", wantMsg: "action is required"},
		{name: "unknown field neither named nor valued", frame: `{"id":"x4","type":"request","action":"echo","extra":"hunter2"}`, wantID: "x4", wantMsg: "unknown envelope field; allowed: id, type, action, payload", wantNotInResp: "hunter2"},
		{name: "case-folded field", frame: `{"ID":"x5","type":"request","action":"echo"}`, wantMsg: "unknown envelope field; allowed: id, type, action, payload"},
	}
	d := newToy()
	_, url := startServer(t, ServerConfig{}, d)
	c := dialRaw(t, url, goodToken)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := d.calls.Load()
			mt := websocket.TextMessage
			if tc.binary {
				mt = websocket.BinaryMessage
			}
			if err := c.WriteMessage(mt, []byte(tc.frame)); err != nil {
				t.Fatal(err)
			}
			m := readMsg(t, c)
			p := errPayload(t, m)
			if p.Code != kanban.CodeBadRequest || m.ID != tc.wantID || !strings.Contains(p.Message, tc.wantMsg) {
				t.Errorf("got id=%q %s %q, want id=%q BAD_REQUEST containing %q", m.ID, p.Code, p.Message, tc.wantID, tc.wantMsg)
			}
			if tc.wantNotInResp != "" && strings.Contains(string(m.Payload)+m.ID, tc.wantNotInResp) {
				t.Errorf("reply: got %s, want no %q", m.Payload, tc.wantNotInResp)
			}
			if got := d.calls.Load(); got != before {
				t.Errorf("dispatch calls: got %d, want %d (no action run)", got, before)
			}
			echoOK(t, c)
		})
	}
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	d := newToy()
	_, url := startServer(t, ServerConfig{}, d)
	httpURL := "http" + strings.TrimPrefix(url, "ws")
	for _, auth := range []string{"", "Bearer wrong", "Basic " + goodToken, "Bearer "} {
		t.Run(auth, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, httpURL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer closeBody(t, resp)
			var body ErrorPayload
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("body: %v", err)
			}
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "Bearer" || body.Code != kanban.CodeUnauthorized {
				t.Errorf("got %d %q %s, want 401 \"Bearer\" UNAUTHORIZED", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body.Code)
			}
			if strings.Contains(body.Message, "wrong") {
				t.Errorf("message: got %q, want no token echo", body.Message)
			}
		})
	}
	// A WebSocket dial with a bad token is refused before any upgrade.
	_, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"Authorization": {"Bearer nope"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("dial with bad token: got err=%v resp=%v, want 401", err, resp)
	}
	closeBody(t, resp)
	// A browser from another origin is refused even with a good token.
	h := http.Header{"Authorization": {"Bearer " + goodToken}, "Origin": {"http://evil.example"}}
	_, resp, err = websocket.DefaultDialer.Dial(url, h)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin dial: got err=%v resp=%v, want 403", err, resp)
	}
	closeBody(t, resp)
	if got := d.calls.Load(); got != 0 {
		t.Errorf("dispatch calls: got %d, want 0", got)
	}
}
