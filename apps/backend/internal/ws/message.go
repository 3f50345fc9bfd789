// Package ws owns Kandev's WebSocket transport: the JSON envelope, the
// server (authentication at upgrade, one writer goroutine per connection,
// bounded concurrent requests, topic subscriptions, notifications) and the
// client used by the CLI and `kandev mcp` (request correlation, reconnect
// with backoff, fail-fast while disconnected).
//
// It imports only the standard library, gorilla/websocket and
// internal/kanban (for error codes). It must not import the action registry
// or the store: the server is given Authenticate and Dispatch functions, and
// topic authorization is the caller's business.
package ws

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Message types carried in Message.Type.
const (
	TypeRequest      = "request"
	TypeResponse     = "response"
	TypeNotification = "notification"
	TypeError        = "error"
)

// maxIDLen bounds request ids and action names (bytes).
const maxIDLen = 128

// idPunct are the characters a request id may use besides ASCII letters
// and digits.
const idPunct = "._:-"

// Message is the envelope of every frame: one JSON object per text frame.
// Responses and errors carry the request's ID (when it is a valid id) and
// its Action (when the application knows it, see ServerConfig.Known);
// notifications have no ID.
type Message struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Action  string          `json:"action"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// ErrorPayload is the payload of a Message of type "error". Message is safe
// to show to any caller: it never contains caller-supplied values.
type ErrorPayload struct {
	Code    kanban.Code    `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// envelopeFields are the only keys a request envelope may have.
var envelopeFields = map[string]bool{"id": true, "type": true, "action": true, "payload": true}

// decodeRequest strictly decodes one inbound frame. On failure it returns a
// BAD_REQUEST error and whatever id and action could be safely recovered so
// the error can still be correlated by the caller.
func decodeRequest(data []byte) (Message, *kanban.Error) {
	var m Message
	malformed := kanban.Errorf(kanban.CodeBadRequest, "malformed message")
	if !utf8.Valid(data) {
		return m, malformed
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return m, malformed
	}
	id, idErr := stringField(fields, "id")
	if idErr == nil && validID(id) {
		m.ID = id
	}
	action, actionErr := stringField(fields, "action")
	if actionErr == nil && len(action) <= maxIDLen {
		m.Action = action
	}
	if _, ok := unknownField(fields); ok {
		// The key is caller-chosen text: name the allowed fields instead.
		return m, kanban.Errorf(kanban.CodeBadRequest, "unknown envelope field; allowed: id, type, action, payload")
	}
	if typ, err := stringField(fields, "type"); err != nil || typ != TypeRequest {
		return m, kanban.Errorf(kanban.CodeBadRequest, "expected a request")
	}
	switch {
	case idErr != nil:
		return m, kanban.Errorf(kanban.CodeBadRequest, "request id must be a string")
	case id == "":
		return m, kanban.Errorf(kanban.CodeBadRequest, "request id is required")
	case !validID(id):
		return m, kanban.Errorf(kanban.CodeBadRequest, "request id must be 1 to %d ASCII letters, digits and %s", maxIDLen, idPunct)
	case actionErr != nil:
		return m, kanban.Errorf(kanban.CodeBadRequest, "action must be a string")
	case action == "":
		return m, kanban.Errorf(kanban.CodeBadRequest, "action is required")
	case len(action) > maxIDLen:
		return m, kanban.Errorf(kanban.CodeBadRequest, "action is too long (max %d bytes)", maxIDLen)
	}
	m.Type = TypeRequest
	m.Payload = fields["payload"]
	return m, nil
}

// validID reports whether id is a request id a reply may carry back:
// 1 to maxIDLen ASCII letters, digits and idPunct.
func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && strings.IndexByte(idPunct, c) < 0 {
			return false
		}
	}
	return true
}

// stringField returns fields[key] as a string; a missing key is "".
func stringField(fields map[string]json.RawMessage, key string) (string, error) {
	raw, ok := fields[key]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return s, nil
}

// unknownField returns the first (sorted) key that is not an envelope
// field, shortened so an error naming it stays small.
func unknownField(fields map[string]json.RawMessage) (string, bool) {
	var unknown []string
	for k := range fields {
		if !envelopeFields[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return "", false
	}
	sort.Strings(unknown)
	name := unknown[0]
	if len(name) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + "…"
	}
	return name, true
}

// errorMessage builds an error envelope for e, correlated with id and action.
func errorMessage(id, action string, e *kanban.Error) Message {
	p := ErrorPayload{Code: e.Code, Message: e.Message}
	if e.Field != "" {
		p.Details = map[string]any{"field": e.Field}
	}
	if e.RetryAfter > 0 {
		p.Details = map[string]any{"retry_after": e.RetryAfter}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		// ErrorPayload holds only strings; this cannot fail.
		raw = []byte(`{"code":"INTERNAL_ERROR","message":"internal error"}`)
	}
	return Message{ID: id, Type: TypeError, Action: action, Payload: raw}
}

// newMessage builds an envelope with payload marshalled to JSON; a nil
// payload is omitted.
func newMessage(id, typ, action string, payload any) (Message, error) {
	m := Message{ID: id, Type: typ, Action: action}
	if payload == nil {
		return m, nil
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return m, fmt.Errorf("marshal %s payload: %w", action, err)
	}
	m.Payload = raw
	return m, nil
}

// encode marshals an envelope. Message holds only strings and valid raw
// JSON, so the error can only come from an invalid Payload.
func encode(m Message) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s message: %w", m.Type, err)
	}
	return b, nil
}

// newRef returns a short random correlation id for internal errors.
func newRef() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error since Go 1.24.
	return hex.EncodeToString(b[:])
}
