package ws

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 24, attack 5: a request whose action names nothing the server
// serves got an error envelope whose action field repeated the caller's
// text ("<script>" came straight back). Unknown names are now answered
// with an empty action; the id and the payload carry no caller value.
func TestAttackUnknownActionNotEchoed(t *testing.T) {
	t.Parallel()
	d := newToy()
	_, url := startServer(t, ServerConfig{}, d)
	c := dialRaw(t, url, goodToken)
	for _, action := range []string{"<script>alert(1)</script>", "sk-live-CANARY", "task.get\u202e", "echo "} {
		frame, err := json.Marshal(map[string]any{"id": "r1", "type": "request", "action": action})
		if err != nil {
			t.Fatal(err)
		}
		writeJSON(t, c, string(frame))
		m := readMsg(t, c)
		p := errPayload(t, m)
		if m.Action != "" || m.ID != "r1" || p.Code != "UNKNOWN_ACTION" {
			t.Fatalf("action %q: got id=%q action=%q %s, want id r1, an empty action, UNKNOWN_ACTION", action, m.ID, m.Action, p.Code)
		}
		if raw, _ := json.Marshal(m); strings.Contains(string(raw), strings.TrimSpace(action)) {
			t.Fatalf("action %q: the reply %s carries it back", action, raw)
		}
	}
	// An envelope refused before dispatch (not a request) does not carry
	// an unknown action back either.
	writeJSON(t, c, `{"id":"r2","type":"response","action":"<img src=x>"}`)
	if m := readMsg(t, c); m.Action != "" || strings.Contains(string(m.Payload), "img") {
		t.Fatalf("got action %q payload %s, want neither to carry the caller's action", m.Action, m.Payload)
	}
	echoOK(t, c)
}

// Issue 24, attack 5: the request id is caller text that every reply
// carries back. An id longer than 128 bytes or outside A-Z a-z 0-9 . _ : -
// is refused (BAD_REQUEST) and not carried back; nothing is dispatched.
func TestAttackOddRequestIDRefusedWithoutEcho(t *testing.T) {
	t.Parallel()
	d := newToy()
	_, url := startServer(t, ServerConfig{}, d)
	c := dialRaw(t, url, goodToken)
	for _, id := range []string{strings.Repeat("x", 129), "<script>", "a b", "id\r\nSet-Cookie:x", "id\u202e", "é", "a/b", `a"b`} {
		frame, err := json.Marshal(map[string]any{"id": id, "type": "request", "action": "echo", "payload": map[string]int{"n": 1}})
		if err != nil {
			t.Fatal(err)
		}
		before := d.calls.Load()
		writeJSON(t, c, string(frame))
		m := readMsg(t, c)
		p := errPayload(t, m)
		if p.Code != "BAD_REQUEST" || m.ID != "" || !strings.Contains(p.Message, "request id must be") {
			t.Fatalf("id %q: got id=%q %s %q, want no id, BAD_REQUEST about the request id", id, m.ID, p.Code, p.Message)
		}
		if raw, _ := json.Marshal(m); strings.Contains(string(raw), id) {
			t.Fatalf("id %q: the reply %s carries it back", id, raw)
		}
		if d.calls.Load() != before {
			t.Fatalf("id %q: the request was dispatched", id)
		}
	}
	// Ids of the safe charset still correlate.
	for _, id := range []string{"b12", "7b1e0c2a-9f1d-4c1e-8a4b-0e5f7d9c1a2b", "cli:3.a_b", strings.Repeat("z", 128)} {
		writeJSON(t, c, `{"id":"`+id+`","type":"request","action":"echo","payload":{}}`)
		if m := readMsg(t, c); m.ID != id || m.Type != TypeResponse || m.Action != "echo" {
			t.Fatalf("id %q: got id=%q type=%q action=%q, want the id and action back in a response", id, m.ID, m.Type, m.Action)
		}
	}
}
