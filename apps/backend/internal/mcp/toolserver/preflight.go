package toolserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/mcp/gate"
)

// preflight refuses, before mcp-go parses a request, what mcp-go would
// answer with an error echoing caller data: an unknown method ("Method X
// not found"), a bad logging level, a tools/list cursor (every tool comes
// in one page), a tools/call whose params do not decode into mcp-go's own
// type ("cannot unmarshal number 1e400 ..."), or one naming a tool outside
// the current tool set ("tool 'X' not found"). The message already passed
// the gate, so it is one well-formed JSON object.
func (s *Server) preflight(msg []byte) *gate.RPCError {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil // responses and notifications get no answer
	}
	switch m.Method {
	case "tools/call":
		return s.preflightCall(m.ID, m.Params)
	case "tools/list":
		var p struct {
			Cursor string `json:"cursor"`
		}
		if len(m.Params) == 0 || string(m.Params) == "null" || (json.Unmarshal(m.Params, &p) == nil && p.Cursor == "") {
			return nil
		}
		return invalidParams(m.ID, "invalid params: tools/list returns every tool in one page; omit cursor")
	case "logging/setLevel":
		var p struct {
			Level string `json:"level"`
		}
		if json.Unmarshal(m.Params, &p) == nil && slices.Contains(logLevels, p.Level) {
			return nil
		}
		return invalidParams(m.ID, "invalid params: level must be one of "+strings.Join(logLevels, ", "))
	case "initialize", "ping", "server/discover":
		return nil
	}
	return &gate.RPCError{Code: -32601, Message: "method not found: this server offers initialize, ping, tools/list, tools/call, logging/setLevel", ID: safeID(m.ID), HTTPStatus: 200}
}

// preflightedKey marks a context whose messages a transport preflighted
// before mcp-go saw them, so the hook does not decode them a second time.
type preflightedKey struct{}

// withPreflighted returns ctx marked as preflighted. Only a transport that
// runs preflight on every message it hands mcp-go under ctx may mark it.
func withPreflighted(ctx context.Context) context.Context {
	return context.WithValue(ctx, preflightedKey{}, true)
}

func preflighted(ctx context.Context) bool {
	v, _ := ctx.Value(preflightedKey{}).(bool)
	return v
}

// logLevels are the MCP logging levels (RFC 5424 names).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func invalidParams(id json.RawMessage, msg string) *gate.RPCError {
	return &gate.RPCError{Code: -32602, Message: msg, ID: safeID(id), HTTPStatus: 200}
}

// preflightCall checks a tools/call's params decode and name a tool of
// the current set.
func (s *Server) preflightCall(id, params json.RawMessage) *gate.RPCError {
	var p mcp.CallToolParams
	if err := json.Unmarshal(params, &p); err != nil {
		return invalidParams(id, "invalid params: tools/call needs a string name and JSON-object arguments within number range")
	}
	if s.hasTool(p.Name) {
		return nil
	}
	return invalidParams(id, "unknown tool: call tools/list for the tools available in this mode")
}

// safeID echoes a JSON-RPC id only when it is a short string or an integer.
func safeID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 || len(id) > 130 {
		return nil
	}
	var s string
	if json.Unmarshal(id, &s) == nil {
		return id
	}
	var n int64
	if json.Unmarshal(id, &n) == nil {
		return id
	}
	return nil
}
