package server

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/mcp/gate"
)

// preflight refuses, before mcp-go parses the message, a tools/call that
// mcp-go would answer with an error echoing caller data: one naming a
// tool outside the current tool set ("tool 'X' not found"), or one whose
// params do not decode into mcp-go's own type ("cannot unmarshal number
// 1e400 ..."). The message already passed the gate, so it is one
// well-formed JSON object.
func (s *Server) preflight(msg []byte) *gate.RPCError {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "tools/call" {
		return nil
	}
	var p mcp.CallToolParams
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return &gate.RPCError{Code: -32602, Message: "invalid params: tools/call needs a string name and JSON-object arguments within number range", ID: safeID(m.ID), HTTPStatus: 200}
	}
	if s.hasTool(p.Name) {
		return nil
	}
	return &gate.RPCError{Code: -32602, Message: "unknown tool: call tools/list for the tools available in this mode", ID: safeID(m.ID), HTTPStatus: 200}
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
