package action

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Caller runs actions in this process as one principal, exactly as a
// WebSocket round trip would: it is the catalog.Backend of the tool
// servers that live in the backend (the external /mcp endpoint acts as the
// operator). A payload is checked by its action's contract on arrival —
// unless it is Checked: a forwarding tool's arguments the MCP wrapper has
// just checked with a narrowing of that contract.
type Caller struct {
	Registry  *Registry
	Principal Principal
}

// Call dispatches the action with payload (Checked, raw JSON or a value to
// marshal) and unmarshals its result into out; an out of type
// *json.RawMessage receives the result's JSON as it was just encoded.
func (c Caller) Call(ctx context.Context, name kanban.Action, payload any, out any) error {
	var (
		raw     json.RawMessage
		checked bool
	)
	switch v := payload.(type) {
	case Checked:
		raw, checked = json.RawMessage(v), true
	case json.RawMessage:
		raw = v
	default:
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return fmt.Errorf("marshal %s payload: %w", name, err)
		}
	}
	res, err := c.Registry.observed(ctx, c.Principal, nil, name, raw, checked)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	rb, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("marshal %s result: %w", name, err)
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = rb // valid, compact JSON just produced: no second pass over it
		return nil
	}
	return json.Unmarshal(rb, out)
}
