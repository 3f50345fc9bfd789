package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// inProcess is a catalog.Backend that dispatches actions in this process
// as a fixed principal (the external /mcp endpoint acts as the operator).
type inProcess struct {
	reg       *action.Registry
	principal action.Principal
}

// Call marshals payload, dispatches the action and unmarshals its result
// into out, exactly as a WebSocket round trip would — except that the
// payload's contract is not checked again: the MCP wrapper in front of
// this backend just ran the same compiled check on it.
func (b inProcess) Call(ctx context.Context, name kanban.Action, payload any, out any) error {
	// A forwarding tool's checked arguments arrive encoded (valid, compact
	// JSON the wrapper just wrote): they go to the action as they are.
	raw, ok := payload.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return fmt.Errorf("marshal %s payload: %w", name, err)
		}
	}
	res, err := b.reg.DispatchChecked(ctx, b.principal, name, raw)
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
