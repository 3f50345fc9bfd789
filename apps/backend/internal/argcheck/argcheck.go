// Package argcheck owns validation: compiling each action contract and MCP
// tool input schema with a compiler that cannot read files or reach the
// network, decoding arguments the same way on every transport
// (DecodeObject), and turning validation failures into short, redacted,
// actionable messages built only from schema data and declared paths.
//
// It imports only the standard library, santhosh-tekuri/jsonschema/v6,
// internal/schemabudget (the bounded estimate every schema passes before
// it is compiled) and internal/escape; it must not import the MCP
// server, the catalog or any domain package.
package argcheck

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kandev/kandev/apps/backend/internal/escape"
	"github.com/kandev/kandev/apps/backend/internal/schemabudget"
)

// MaxSchemaBytes is the largest input schema Compile accepts (the
// estimator's default byte limit).
var MaxSchemaBytes = schemabudget.DefaultLimits().Bytes

// Options configure CompileWith.
type Options struct {
	// AssertFormat enforces format keywords in every dialect. Without it
	// the dialect's default applies (asserted in draft-07, annotations only
	// from 2019-09 on), as for an independent compile of the same schema.
	AssertFormat bool
	// Limits bound the estimate that runs before compiling (zero: the
	// defaults).
	Limits schemabudget.Limits
}

// resourceURL is the location every schema is compiled under. Its scheme has
// no loader, so relative references resolve to URLs that are refused too.
const resourceURL = "mem:///kandev/tool-input.json"

// Validator checks one tool's arguments against its compiled input schema.
// It is safe for concurrent use.
type Validator struct {
	tool   string
	schema *jsonschema.Schema
	tree   *tree
	// plain: the tool name and every key and string of the schema are
	// printable, so the messages, built from nothing else, need no escaping.
	plain bool
}

// Compile compiles one of Kandev's own tool input schemas: draft 2020-12 by
// default, no URL loader at all (no file:// and no network references),
// format asserted. The error names the tool.
func Compile(tool string, schema []byte) (*Validator, error) {
	return CompileWith(tool, schema, Options{AssertFormat: true})
}

// CompileWith compiles one tool's input schema with a fresh compiler that
// has no URL loader. Before the compiler sees a byte, the schema must pass
// schemabudget.Check; a refusal is returned wrapped (errors.As finds the
// *schemabudget.Refusal). The error names the tool.
func CompileWith(tool string, schema []byte, o Options) (*Validator, error) {
	if o.Limits == (schemabudget.Limits{}) {
		o.Limits = schemabudget.DefaultLimits()
	}
	if _, refusal := schemabudget.Check(schema, o.Limits); refusal != nil {
		return nil, fmt.Errorf("compile input schema for %s: %w", tool, refusal)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("compile input schema for %s: %w", tool, err)
	}
	t, err := newTree(resourceURL, doc)
	if err != nil {
		return nil, fmt.Errorf("compile input schema for %s: %w", tool, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if o.AssertFormat {
		// A declared format is part of Kandev's advertised contract: enforce
		// it, so a bad date-time is reported with the call's other problems.
		c.AssertFormat()
	}
	if err := c.AddResource(resourceURL, doc); err != nil {
		return nil, fmt.Errorf("compile input schema for %s: %w", tool, err)
	}
	s, err := compileRecovered(c)
	if err != nil {
		return nil, fmt.Errorf("compile input schema for %s: %w", tool, err)
	}
	for i, frag := range t.pnFrags {
		// Fragments in data positions (an enum value, say) do not compile: skip.
		if sub, err := c.Compile(resourceURL + "#" + frag); err == nil {
			t.pnSchema[nodeID(t.pnNodes[i])] = sub
		}
	}
	return &Validator{tool: tool, schema: s, tree: t, plain: !escape.Needed(tool) && printable(doc, 0)}, nil
}

// printable reports whether every key and string of a decoded schema is
// printable (false past maxSchemaDepth, which newTree refuses anyway).
func printable(v any, depth int) bool {
	if depth > maxSchemaDepth {
		return false
	}
	switch x := v.(type) {
	case string:
		return !escape.Needed(x)
	case map[string]any:
		for k, c := range x {
			if escape.Needed(k) || !printable(c, depth+1) {
				return false
			}
		}
	case []any:
		for _, c := range x {
			if !printable(c, depth+1) {
				return false
			}
		}
	}
	return true
}

// compileRecovered compiles the resource, turning a compiler panic (on a
// schema it does not expect) into an error.
func compileRecovered(c *jsonschema.Compiler) (s *jsonschema.Schema, err error) {
	defer func() {
		if recover() != nil {
			s, err = nil, errors.New("the compiler failed on this schema")
		}
	}()
	return c.Compile(resourceURL)
}

// Tool returns the name of the tool the validator was compiled for.
func (v *Validator) Tool() string { return v.tool }

// Validate checks args, a JSON value as decoded by encoding/json (maps,
// slices, float64 or json.Number, string, bool, nil). It returns nil or a
// *Problems. It never panics: a failure inside the validator becomes a
// generic problem at the root.
func (v *Validator) Validate(args any) (err error) {
	defer func() {
		if recover() != nil {
			err = &Problems{Tool: v.tool, List: []Problem{{Path: "/", Text: "/: value could not be validated"}}}
		}
	}()
	verr := v.schema.Validate(args)
	if verr == nil {
		return nil
	}
	// Validate returns the tree's root itself; errors.As covers a wrapped one.
	ve, ok := verr.(*jsonschema.ValidationError) //nolint:errorlint // the fast path; errors.As follows
	if !ok && !errors.As(verr, &ve) {
		return &Problems{Tool: v.tool, List: []Problem{{Path: "/", Text: "/: value could not be validated"}}}
	}
	// The Problems and the first problems share one allocation.
	out := &problemsBuf{}
	c := collector{tree: v.tree, args: args, list: out.first[:0]}
	c.walk(ve)
	list := c.problems()
	if len(list) == 0 {
		list = append(list, Problem{Path: "/", Text: "/: does not match the schema"})
	}
	out.Problems = Problems{Tool: v.tool, List: list, sorted: list, plain: v.plain}
	return &out.Problems
}

// problemsBuf is a Problems with room for the problems of a typical
// refusal, so that Validate allocates once for both.
type problemsBuf struct {
	Problems
	first [8]Problem
}
