package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// Def declares one action: its name, who may call it, its payload type
// (In), its contract's schema and aliases, and its handler — side by side,
// in one declaration in the file of its noun:
//
//	var _ = declare(Def[IDIn, *kanban.Workspace]{
//		Name:   kanban.ActionWorkspaceGet,
//		Effect: Reads,
//		Allow:  AllowOperator | AllowSession,
//		Schema: idOnly("The workspace."),
//		Run: func(s *Service, ctx context.Context, p Principal, in IDIn) (*kanban.Workspace, error) { … },
//	})
//
// New registers every declared action; its contract is compiled once and
// checked before the handler on every transport.
type Def[In, Out any] struct {
	Name kanban.Action
	// Tool names the MCP tool that serves the action unchanged (see
	// Contract.Tool); catalog declares that tool from this action and
	// takes its name from here.
	Tool  string
	Allow Allow
	// Effect says whether the action changes state (Writes: audited,
	// counted against the caller's write rate) or only reads; every
	// action declares one.
	Effect   Effect
	Blocking bool
	// Schema is the payload's JSON Schema, its shape In's (conform proves
	// it when the contract compiles), its bounds and enums kanban's.
	Schema  schema.S
	Aliases Aliases
	// Run is the handler; s is the registry's Service.
	Run func(s *Service, ctx context.Context, p Principal, in In) (Out, error)
}

// handler decodes a checked payload and runs the action.
type handler func(ctx context.Context, p Principal, raw json.RawMessage) (any, error)

// binding is a declared action: its contract, and its handler once bound
// to a Service.
type binding struct {
	c    *Contract
	bind func(s *Service) handler
}

// declared holds every declared action in declaration order. It is
// written only by package initialization (declare) and read-only after.
var declared []binding

// declare adds an action's declaration (at package initialization); New
// registers it. It returns the action's contract.
func declare[In, Out any](d Def[In, Out]) *Contract {
	c := &Contract{name: d.Name, tool: d.Tool, allow: d.Allow, effect: d.Effect, blocking: d.Blocking, payload: reflect.TypeFor[In](),
		schema: d.Schema, aliases: d.Aliases}
	run := d.Run
	b := binding{c: c}
	if run != nil {
		b.bind = func(s *Service) handler {
			return func(ctx context.Context, p Principal, raw json.RawMessage) (any, error) {
				var in In
				if err := decodePayload(raw, &in); err != nil {
					return nil, err
				}
				return run(s, ctx, p, in)
			}
		}
	}
	declared = append(declared, b)
	return c
}

// decodePayload fills v from a checked payload.
func decodePayload(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return kanban.Errorf(kanban.CodeBadRequest, "payload does not match the action's shape")
	}
	return nil
}

// compileDeclared checks every declaration and compiles every contract,
// once per process: a declaration error (a duplicate name, a missing
// schema or handler, a schema that does not fit its payload type or does
// not compile) means the backend does not start.
var compileDeclared = sync.OnceValue(func() error {
	names, tools := map[kanban.Action]bool{}, map[string]bool{}
	for _, b := range declared {
		c := b.c
		switch {
		case names[c.name]:
			return fmt.Errorf("action %s declared twice", c.name)
		case c.tool != "" && tools[c.tool]:
			return fmt.Errorf("action %s: tool %s already serves another action", c.name, c.tool)
		case c.effect != Reads && c.effect != Writes && c.effect != External:
			return fmt.Errorf("action %s declares no effect (Reads, Writes or External)", c.name)
		case c.schema == nil:
			return fmt.Errorf("action %s declares no schema", c.name)
		case b.bind == nil:
			return fmt.Errorf("action %s declares no handler", c.name)
		}
		names[c.name], tools[c.tool] = true, c.tool != ""
		if err := c.compile(); err != nil {
			return err
		}
	}
	return nil
})

// byName indexes the declared contracts (after package initialization).
var byName = sync.OnceValue(func() map[kanban.Action]*Contract {
	m := make(map[kanban.Action]*Contract, len(declared))
	for _, b := range declared {
		m[b.c.name] = b.c
	}
	return m
})

// ContractOf returns the declared contract of the named action, or nil.
// Its schema and aliases are readable at once (catalog derives tools from
// them at its own initialization); it is compiled by New or Check.
func ContractOf(name kanban.Action) *Contract { return byName()[name] }

// Contracts returns every declared contract, sorted by name. Each is
// compiled on its first Check (New compiles them all, so a backend with a
// declaration error does not start).
func Contracts() []*Contract {
	out := make([]*Contract, 0, len(declared))
	for _, b := range declared {
		out = append(out, b.c)
	}
	slices.SortFunc(out, func(a, b *Contract) int { return strings.Compare(string(a.name), string(b.name)) })
	return out
}

// NewContract compiles the contract of an action served outside the
// registry (the WebSocket's own subscribe and unsubscribe, which act on
// the connection): its schema fits In and is checked by the same
// validator, with the same refusal texts, as a declared action's.
func NewContract[In any](name kanban.Action, s schema.S) (*Contract, error) {
	c := &Contract{name: name, payload: reflect.TypeFor[In](), schema: s}
	if err := c.compile(); err != nil {
		return nil, err
	}
	return c, nil
}
