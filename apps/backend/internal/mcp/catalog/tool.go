package catalog

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
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
// Errors are *kanban.Error for anything the agent can act on. An out of
// type *json.RawMessage receives the answer as valid JSON (it was decoded
// from the wire or encoded in process).
type Backend interface {
	Call(ctx context.Context, action kanban.Action, payload any, out any) error
}

// Reply is an action's answer exactly as Backend.Call returned it: valid
// JSON, so the server serves it as the tool's result without checking it
// again.
type Reply json.RawMessage

// MarshalJSON returns r (null when empty), so a Reply encodes as the JSON
// it holds.
func (r Reply) MarshalJSON() ([]byte, error) { return json.RawMessage(r).MarshalJSON() }

// Call is what a tool handler receives.
type Call struct {
	// Args are the validated arguments (a JSON object).
	Args json.RawMessage
	// Backend runs actions as the session (or operator) behind this server.
	Backend Backend
	// Progress sends a progress notification when the caller asked for
	// them; it is a no-op otherwise.
	Progress func(progress, total float64, message string)
	// Action is the tool's backend action.
	Action kanban.Action
	// KeepAlive is how often a call that waits (ask_user_question_kandev)
	// sends a progress notification; 0: DefaultQuestionKeepAlive.
	KeepAlive time.Duration
}

// Forward runs the tool's action with payload and returns its answer.
func (c Call) Forward(ctx context.Context, payload any) (Reply, error) {
	var out json.RawMessage
	if err := c.Backend.Call(ctx, c.Action, payload, &out); err != nil {
		return nil, err
	}
	return Reply(out), nil
}

// Decode unmarshals the validated arguments into v.
func (c Call) Decode(v any) error { return json.Unmarshal(c.Args, v) }

// Tool is one declared tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	Input       S // nil: no parameters
	// Output is the result's shape: served as structured content (with
	// the same JSON as text), documented in the tool reference and checked
	// by the tests. nil: unstructured (text) result.
	Output S
	// ShowOutput advertises Output in tools/list, for a tool whose result
	// an agent must read by its structure. Every agent pays for tools/list
	// in context, and the per-mode byte budget wins over complete output
	// schemas (DESIGN §7), so the others are left to the reference.
	ShowOutput bool
	Hints      Hints
	// Action is the one backend action the tool adapts. Run may call no
	// other (the server refuses it), and the backend lets a session call
	// only the actions of its mode's tools: a mode is enforced on every
	// transport, not just in tools/list.
	Action kanban.Action
	// Aliases and ValueAliases are the legacy argument names and enum
	// values the tool accepts, unadvertised (see Normalize): the one
	// declared-alias mechanism, applied by the wrapper before validation.
	Aliases      []Alias
	ValueAliases ValueAliases
	// Run performs the call; its result is returned as JSON text and, with
	// an Output schema, as structured content. Nil forwards the arguments
	// to Action unchanged (the tool's property names are its payload fields).
	Run func(ctx context.Context, c Call) (any, error)
	// forwards: Run is the default, so the action's payload is exactly the
	// tool's arguments.
	forwards bool
}

// Forwards reports whether the tool hands its arguments to its action
// unchanged (no Run of its own): the tool's input schema is then the
// action's payload contract on every transport.
func (t *Tool) Forwards() bool { return t.forwards }

// InputSchema returns the tool's advertised input schema.
func (t *Tool) InputSchema() S {
	if t.Input == nil {
		return NoParams()
	}
	return t.Input
}

// Properties lists the names of the tool's input properties, sorted.
func (t *Tool) Properties() []string {
	props, _ := t.InputSchema()["properties"].(P)
	return slices.Sorted(maps.Keys(props))
}

// Group is a named set of tools that modes include together.
type Group struct {
	Name  string
	Tools []*Tool
}

// forward is the default Run: the arguments go to the tool's action
// unchanged.
func forward(ctx context.Context, c Call) (any, error) {
	return c.Forward(ctx, c.Args)
}
