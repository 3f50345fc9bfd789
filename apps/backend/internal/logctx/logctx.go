// Package logctx carries the ids a log line must name — the HTTP request
// it was logged while serving, the agent session it is about — through a
// context, and owns the slog handler that adds them to every record and
// redacts every record before it is written.
//
// It imports only the standard library and internal/redact; nothing that
// logs may be imported here.
package logctx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// The attribute keys the handler adds.
const (
	RequestKey = "request_id"
	SessionKey = "session_id"
)

type ctxKey int

const (
	requestKey ctxKey = iota
	sessionKey
)

// WithRequest returns ctx carrying the request id id.
func WithRequest(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestKey, id)
}

// WithSession returns ctx carrying the agent session id id.
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey, id)
}

// RequestID returns the request id ctx carries ("" when none).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestKey).(string)
	return id
}

// SessionID returns the session id ctx carries ("" when none).
func SessionID(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey).(string)
	return id
}

// NewRequestID returns a fresh random request id: 16 hex digits, short
// enough that the redaction of long hex runs (tokens) leaves it readable.
func NewRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
