package toolserver

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// entry is one tool ready to serve: its wire declaration, its compiled
// validator and its definition. Entries are built once at start and never
// change, so a tool set swap can never pair a handler with another
// validator.
type entry struct {
	name      string
	def       *catalog.Tool // nil for an upstream tool
	wire      mcp.Tool
	validator *argcheck.Validator
	normalize func(map[string]any) (map[string]any, error)
}

// Compiled is the whole catalog with every validator compiled.
type Compiled struct {
	cat     *catalog.Catalog
	entries map[string]*entry
}

// Compile builds and compiles the whole catalog. Any tool whose schema
// does not compile fails the build (fail closed).
func Compile() (*Compiled, error) {
	cat, err := catalog.New()
	if err != nil {
		return nil, err
	}
	c := &Compiled{cat: cat, entries: map[string]*entry{}}
	for _, t := range cat.All() {
		e, err := newEntry(t)
		if err != nil {
			return nil, err
		}
		c.entries[t.Name] = e
	}
	return c, nil
}

func newEntry(t *catalog.Tool) (*entry, error) {
	in, err := json.Marshal(t.InputSchema())
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	v, err := argcheck.Compile(t.Name, in)
	if err != nil {
		return nil, err
	}
	wire := mcp.Tool{
		Name:           t.Name,
		Title:          t.Title,
		Description:    t.Description,
		RawInputSchema: in,
		Annotations: mcp.ToolAnnotation{
			ReadOnlyHint:    mcp.ToBoolPtr(t.Hints.ReadOnly),
			DestructiveHint: mcp.ToBoolPtr(t.Hints.Destructive),
			IdempotentHint:  mcp.ToBoolPtr(t.Hints.Idempotent),
			OpenWorldHint:   mcp.ToBoolPtr(t.Hints.OpenWorld),
		},
	}
	if t.Output != nil && t.ShowOutput {
		if wire.RawOutputSchema, err = ResultSchema(t); err != nil {
			return nil, err
		}
	}
	e := &entry{name: t.Name, def: t, wire: wire, validator: v}
	if t.HasNormalization() {
		e.normalize = t.Normalize
	}
	return e, nil
}

// Tools returns the wire declarations of a profile's tools, sorted by name:
// exactly what tools/list serves.
func (c *Compiled) Tools(p catalog.Profile) ([]mcp.Tool, error) {
	defs, err := c.cat.Tools(p)
	if err != nil {
		return nil, err
	}
	out := make([]mcp.Tool, len(defs))
	for i, d := range defs {
		out[i] = c.entries[d.Name].wire
	}
	return out, nil
}

// Catalog returns the underlying catalog.
func (c *Compiled) Catalog() *catalog.Catalog { return c.cat }

// ResultSchema is the JSON of the tool's result contract as a client
// would validate it (wireOutput of its Output): what tools/list advertises
// for a tool with ShowOutput, and what tests check every result against.
func ResultSchema(t *catalog.Tool) ([]byte, error) {
	b, err := json.Marshal(wireOutput(t.Output, true))
	if err != nil {
		return nil, fmt.Errorf("tool %s: output schema: %w", t.Name, err)
	}
	return b, nil
}

// wireOutput is the output schema as served: shape, types and required
// fields; property descriptions are left to the generated reference,
// because every agent pays for tools/list in context.
func wireOutput(s catalog.S, root bool) catalog.S {
	out := make(catalog.S, len(s))
	for k, v := range s {
		switch {
		case k == "description" && !root:
			continue
		case k == "properties":
			props := catalog.P{}
			for n, p := range v.(catalog.P) {
				props[n] = wireOutput(p, false)
			}
			out[k] = props
		case k == "items" || k == "additionalProperties":
			if sub, ok := v.(catalog.S); ok {
				out[k] = wireOutput(sub, false)
				continue
			}
			out[k] = v
		case k == "oneOf" || k == "anyOf":
			list := v.([]any)
			bs := make([]any, len(list))
			for i, b := range list {
				if sub, ok := b.(catalog.S); ok {
					bs[i] = wireOutput(sub, false)
				} else {
					bs[i] = b
				}
			}
			out[k] = bs
		default:
			out[k] = v
		}
	}
	return out
}
