package ws

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// canary is appended to every caller-chosen key and string value of a
// fuzzed frame; no message the server writes may contain it.
const canary = "ZQXcanary"

// FuzzDecodeRequest feeds arbitrary frames to the envelope decoder. It
// must never panic; a refusal is BAD_REQUEST, recovers only bounded id and
// action, and never echoes caller text; an accepted frame is a well-formed
// request.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","type":"request","action":"task.list","payload":{"limit":5}}`,
		`{"id":"1","type":"request","action":"task.list"}`,
		`{"id":1,"type":"request","action":"x"}`,
		`{"id":"1","type":"response","action":"x"}`,
		`{"id":"","type":"request","action":"x"}`,
		`{"id":"1","type":"request","action":"x","extra":true}`,
		`{"id":"1","type":"request","action":"x","payload":null}`,
		`[]`, `null`, `"x"`, `{`, "{\"id\":\"\xff\"}", `{"id":"1","id":"2","type":"request","action":"a"}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, frame []byte, mark bool) {
		if mark {
			var tree any
			if json.Unmarshal(frame, &tree) != nil {
				return
			}
			b, err := json.Marshal(markTree(tree))
			if err != nil {
				return
			}
			frame = b
		}
		m, kerr := decodeRequest(frame)
		if len(m.ID) > maxIDLen || len(m.Action) > maxIDLen {
			t.Fatalf("got id %d and action %d bytes, want <= %d", len(m.ID), len(m.Action), maxIDLen)
		}
		if m.ID != "" && !validID(m.ID) {
			t.Fatalf("got id %q, want empty or 1 to %d of A-Z a-z 0-9 %s", m.ID, maxIDLen, idPunct)
		}
		if kerr != nil {
			if kerr.Code != kanban.CodeBadRequest {
				t.Fatalf("got code %s, want BAD_REQUEST", kerr.Code)
			}
			if strings.Contains(kerr.Message, canary) || len(kerr.Message) > 256 {
				t.Fatalf("got message %q, want a short message without caller text", kerr.Message)
			}
			env, err := encode(errorMessage(m.ID, m.Action, kerr))
			if err != nil || !json.Valid(env) {
				t.Fatalf("error envelope %q does not encode: %v", env, err)
			}
			return
		}
		if m.Type != TypeRequest || m.ID == "" || m.Action == "" {
			t.Fatalf("accepted %q as %+v, want a request with id and action", frame, m)
		}
		if len(m.Payload) > 0 && !json.Valid(m.Payload) {
			t.Fatalf("accepted payload %q is not JSON", m.Payload)
		}
	})
}

// markTree appends canary to every key that is not an envelope field and
// to every string value.
func markTree(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			if !envelopeFields[k] {
				k += canary
			}
			out[k] = markTree(c)
		}
		return out
	case []any:
		for i, c := range x {
			x[i] = markTree(c)
		}
		return x
	case string:
		return x + canary
	}
	return v
}
