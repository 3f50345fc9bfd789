// Package gate owns the strict JSON gate in front of mcp-go: every JSON-RPC
// message (one HTTP POST body or one stdio line) is checked here before mcp-go
// parses it, and rejected with a JSON-RPC error if it is too large, not valid
// UTF-8, not strict JSON (trailing data, duplicate keys, nesting deeper than 64,
// number tokens longer than 64 characters), a batch, not an object, or a
// tools/call whose params keys are not exactly name, arguments, _meta.
//
// Error messages are fixed texts that never echo caller content; only a
// request's own id is echoed, as JSON-RPC requires.
//
// The package imports only the standard library; it must not import mcp-go or
// any other Kandev package.
package gate

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
)

// Limits enforced by the gate.
const (
	// MaxMessageBytes is the largest accepted message (body or line, without
	// the line terminator).
	MaxMessageBytes = 4 << 20
	// MaxDepth is the deepest accepted nesting of objects and arrays.
	MaxDepth = 64
	// MaxNumberLen is the longest accepted number token, in bytes.
	MaxNumberLen = 64
	// MaxIDStringLen is the longest string id (raw bytes between the quotes)
	// that is echoed in an error response; longer ids are answered with null.
	MaxIDStringLen = 128
)

// JSON-RPC 2.0 error codes used by the gate.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeInvalidParams  = -32602
)

// RPCError is a rejection: the JSON-RPC error to send back instead of passing
// the message to mcp-go.
type RPCError struct {
	// Code is the JSON-RPC error code (CodeParseError, CodeInvalidRequest or
	// CodeInvalidParams).
	Code int
	// Message is a fixed text that never contains caller content.
	Message string
	// ID is the request's id to echo (a string of at most MaxIDStringLen
	// bytes or an integer token, exactly as sent), or nil for null.
	ID json.RawMessage
	// HTTPStatus is the status the HTTP transport answers with (400 or 413).
	HTTPStatus int
	// Notification is true when the message was fully parsed as a request
	// without an id (or with a null id, which mcp-go treats the same): the
	// stdio transport sends nothing back for it, as JSON-RPC requires.
	Notification bool
}

// Response returns the JSON-RPC error response for e.
func (e *RPCError) Response() []byte {
	b := make([]byte, 0, 64+len(e.ID)+len(e.Message))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if len(e.ID) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.ID...)
	}
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(e.Code), 10)
	b = append(b, `,"message":`...)
	msg, err := json.Marshal(e.Message)
	if err != nil { // cannot happen for a string; keep the response valid anyway
		msg = []byte(`"rejected"`)
	}
	b = append(b, msg...)
	return append(b, "}}"...)
}

// failure identifies one rejection class; failures maps it to code and text.
type failure uint8

const (
	failNone failure = iota
	failEmpty
	failSyntax
	failTrailing
	failUTF8
	failSurrogate
	failDepth
	failDuplicateKey
	failLongNumber
	failTooLarge
	failBatch
	failNotObject
	failMemberCase
	failParamsNotObject
	failParamsKeys
	failIDType
)

var failures = [...]struct {
	code int
	msg  string
}{
	failEmpty:           {CodeParseError, "parse error: empty message"},
	failSyntax:          {CodeParseError, "parse error: invalid JSON"},
	failTrailing:        {CodeParseError, "parse error: trailing data after the JSON value"},
	failUTF8:            {CodeParseError, "parse error: invalid UTF-8"},
	failSurrogate:       {CodeParseError, "parse error: unpaired UTF-16 surrogate escape"},
	failDepth:           {CodeParseError, "parse error: nesting deeper than " + strconv.Itoa(MaxDepth)},
	failDuplicateKey:    {CodeParseError, "parse error: duplicate object key"},
	failLongNumber:      {CodeParseError, "parse error: number longer than " + strconv.Itoa(MaxNumberLen) + " characters"},
	failTooLarge:        {CodeParseError, "request too large: limit is " + strconv.Itoa(MaxMessageBytes) + " bytes"},
	failBatch:           {CodeInvalidRequest, "invalid request: batch requests are not supported"},
	failNotObject:       {CodeInvalidRequest, "invalid request: message must be a JSON object"},
	failMemberCase:      {CodeInvalidRequest, "invalid request: member names jsonrpc, id, method, params, result, error must be lower-case"},
	failParamsNotObject: {CodeInvalidParams, "invalid params: tools/call params must be an object"},
	failParamsKeys:      {CodeInvalidParams, "invalid params: tools/call params allow only name, arguments, _meta"},
	failIDType:          {CodeInvalidRequest, "invalid request: id must be a string, a number or null"},
}

// newError builds the RPCError for f; id is copied so the result does not
// retain the caller's message buffer.
func newError(f failure, id []byte, notification bool) *RPCError {
	e := &RPCError{
		Code:         failures[f].code,
		Message:      failures[f].msg,
		HTTPStatus:   http.StatusBadRequest,
		Notification: notification,
	}
	if f == failTooLarge {
		e.HTTPStatus = http.StatusRequestEntityTooLarge
	}
	if id != nil {
		e.ID = append(json.RawMessage(nil), id...)
	}
	return e
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

// Check inspects one message. It returns nil if the message may pass to
// mcp-go, else the error to send back. It runs in one pass over msg, in time
// linear in len(msg), and does not retain msg.
func Check(msg []byte) *RPCError {
	if len(msg) > MaxMessageBytes {
		return newError(failTooLarge, nil, false)
	}
	s := scanners.Get().(*scanner)
	defer func() {
		s.reset(nil)
		scanners.Put(s)
	}()
	s.reset(msg)
	if f := s.scan(); f != failNone {
		return newError(f, s.echoID(), false)
	}
	if f := s.verdict(); f != failNone {
		return newError(f, s.echoID(), s.notification())
	}
	return nil
}
