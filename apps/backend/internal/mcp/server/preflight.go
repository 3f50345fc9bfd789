package server

import (
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/mcp/gate"
)

// preflight refuses a tools/call for a tool outside the current tool set
// with a JSON-RPC error that does not echo the requested name (mcp-go's own
// "not found" error would). The message already passed the gate, so it is
// one well-formed JSON object.
func (s *Server) preflight(msg []byte) *gate.RPCError {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name *string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "tools/call" {
		return nil
	}
	if m.Params.Name != nil && s.hasTool(*m.Params.Name) {
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
