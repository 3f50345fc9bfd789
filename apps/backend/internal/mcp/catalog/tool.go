package catalog

import (
	"context"
	"encoding/json"
)

// Suffix ends every tool name.
const Suffix = "_kandev"

// Hints are a tool's annotations, each chosen on purpose.
type Hints struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// Read-only and mutation hint presets.
var (
	ReadHints        = Hints{ReadOnly: true, Idempotent: true}
	WriteHints       = Hints{}
	IdempotentWrite  = Hints{Idempotent: true}
	DestructiveHints = Hints{Destructive: true, Idempotent: true}
)

// Backend runs actions on the Kandev backend with the caller's identity
// (attached by the backend from the connection, never from the payload).
// Errors are *kanban.Error for anything the agent can act on.
type Backend interface {
	Call(ctx context.Context, action string, payload any, out any) error
}

// Call is what a tool handler receives.
type Call struct {
	// Args are the validated arguments (a JSON object).
	Args json.RawMessage
	// Backend runs actions as the session (or operator) behind this server.
	Backend Backend
	// Progress sends a progress notification when the caller asked for
	// them; it is a no-op otherwise.
	Progress func(progress, total float64, message string)
}

// Decode unmarshals the validated arguments into v.
func (c Call) Decode(v any) error { return json.Unmarshal(c.Args, v) }

// Tool is one declared tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	Input       S // nil: no parameters
	Output      S // nil: unstructured (text) result
	Hints       Hints
	// Actions are the backend actions Run may call. The server refuses any
	// other (so the list cannot drift), and the backend lets a session call
	// only the actions of its mode's tools: a mode is enforced on every
	// transport, not just in tools/list.
	Actions []string
	// Normalize rewrites a shallow copy of the arguments before
	// validation. Only create_task_kandev has one.
	Normalize func(args map[string]any) (map[string]any, error)
	// Run performs the call; its result is returned as JSON text and, with
	// an Output schema, as structured content.
	Run func(ctx context.Context, c Call) (any, error)
}

// InputSchema returns the tool's advertised input schema.
func (t *Tool) InputSchema() S {
	if t.Input == nil {
		return NoParams()
	}
	return t.Input
}

// Group is a named set of tools that modes include together.
type Group struct {
	Name  string
	Tools []*Tool
}

// forward returns a Run that passes the arguments to action unchanged
// (the tool's property names are the action's payload fields).
func forward(action string) func(ctx context.Context, c Call) (any, error) {
	return func(ctx context.Context, c Call) (any, error) {
		return call(ctx, c, action, c.Args)
	}
}

// forwardID returns a Run that passes the arguments to action with the
// tool's entity id property (idProp, e.g. "workflow_id") renamed to the
// action's "id"; every other property is passed unchanged.
func forwardID(action, idProp string) func(ctx context.Context, c Call) (any, error) {
	return forwardRenamed(action, map[string]string{idProp: "id"})
}

// forwardRenamed returns a Run that passes the arguments to action with
// the properties named in renames given the action's field names; every
// other property is passed unchanged.
func forwardRenamed(action string, renames map[string]string) func(ctx context.Context, c Call) (any, error) {
	return func(ctx context.Context, c Call) (any, error) {
		var in map[string]json.RawMessage
		if err := c.Decode(&in); err != nil {
			return nil, err
		}
		out := make(map[string]json.RawMessage, len(in))
		for k, v := range in {
			if to, ok := renames[k]; ok {
				k = to
			}
			out[k] = v
		}
		return call(ctx, c, action, out)
	}
}
