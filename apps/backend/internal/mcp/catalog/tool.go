package catalog

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
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

// Tool is one declared tool, declared from its action: the action's
// contract (package action) is the tool's input — the whole of it for the
// tool that serves the action unchanged, narrowed for the others — so a
// tool and its action cannot drift.
type Tool struct {
	// Name is the tool's name. The tool that serves its action unchanged
	// (it forwards, nothing dropped or required) leaves it empty: its name
	// is the contract's Tool, so both refuse under the same name.
	Name        string
	Title       string
	Description string
	// Input is the input schema of a tool whose Run adapts its arguments
	// into the action's payload (the action checks that payload); nil
	// derives it from the contract: the contract narrowed by Drop and
	// Require for a forwarding tool (schema.Narrow, so every argument set
	// the tool accepts is a payload the contract accepts), the contract
	// without Drop for an adapting one (schema.Without).
	Input S
	// Drop are contract properties the tool does not take (the board's
	// operator-only filters, or fields an adapting Run fills in); Require
	// are optional ones it requires.
	Drop, Require []string
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
	// Action is the one backend action the tool is declared from. Run may
	// call no other (the server refuses it), and the backend lets a
	// session call only the actions of its mode's tools: a mode is
	// enforced on every transport, not just in tools/list.
	Action kanban.Action
	// Run performs the call; its result is returned as JSON text and, with
	// an Output schema, as structured content. Nil forwards the checked
	// arguments to Action as they are (action.Checked: not checked again).
	Run func(ctx context.Context, c Call) (any, error)

	// forwards: Run is the default, so the action's payload is exactly the
	// tool's arguments.
	forwards bool
	// aliases are the contract's aliases the tool takes (Normalize).
	aliases action.Aliases
}

// Forwards reports whether the tool hands its arguments to its action
// unchanged (no Run of its own): its input schema is then its action's
// contract or a narrowing of it.
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

// Normalize applies the legacy argument names and enum values the tool
// takes from its action's contract (action.Aliases.Normalize), before
// validation, on a shallow copy when they change anything.
func (t *Tool) Normalize(args map[string]any) (map[string]any, error) {
	return t.aliases.Normalize(args)
}

// HasNormalization reports whether the tool takes any alias.
func (t *Tool) HasNormalization() bool { return len(t.aliases.Names) > 0 || len(t.aliases.Values) > 0 }

// Group is a named set of tools that modes include together.
type Group struct {
	Name  string
	Tools []*Tool
}

// forward is the default Run: the arguments, which the wrapper has just
// checked against the tool's input (a narrowing of the action's contract),
// go to the action as they are, Checked.
func forward(ctx context.Context, c Call) (any, error) {
	return c.Forward(ctx, action.Checked(c.Args))
}
