// Package argcheck owns the validation of MCP tool arguments: compiling each
// tool's advertised input schema with a compiler that cannot read files or
// reach the network, and turning validation failures into short, redacted,
// actionable messages built only from schema data and declared paths.
//
// It imports only the standard library and santhosh-tekuri/jsonschema/v6; it
// must not import the MCP server, the catalog or any domain package.
package argcheck

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxSchemaBytes is the largest input schema Compile accepts.
const MaxSchemaBytes = 256 << 10

// resourceURL is the location every schema is compiled under. Its scheme has
// no loader, so relative references resolve to URLs that are refused too.
const resourceURL = "mem:///kandev/tool-input.json"

// Validator checks one tool's arguments against its compiled input schema.
// It is safe for concurrent use.
type Validator struct {
	tool   string
	schema *jsonschema.Schema
	tree   *tree
}

// Compile compiles one tool's input schema with a fresh compiler: draft
// 2020-12 by default, no URL loader at all (no file:// and no network
// references), format not asserted. It refuses schemas over MaxSchemaBytes
// and schemas whose expansion through local references is too large. The
// error names the tool.
func Compile(tool string, schema []byte) (*Validator, error) {
	if len(schema) > MaxSchemaBytes {
		return nil, fmt.Errorf("compile input schema for %s: %d bytes exceeds the %d-byte budget", tool, len(schema), MaxSchemaBytes)
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
	// A declared format is part of the advertised contract: enforce it, so
	// a bad date-time is reported with the call's other problems.
	c.AssertFormat()
	if err := c.AddResource(resourceURL, doc); err != nil {
		return nil, fmt.Errorf("compile input schema for %s: %w", tool, err)
	}
	s, err := c.Compile(resourceURL)
	if err != nil {
		return nil, fmt.Errorf("compile input schema for %s: %w", tool, err)
	}
	for i, frag := range t.pnFrags {
		// Fragments in data positions (an enum value, say) do not compile: skip.
		if sub, err := c.Compile(resourceURL + "#" + frag); err == nil {
			t.pnSchema[nodeID(t.pnNodes[i])] = sub
		}
	}
	return &Validator{tool: tool, schema: s, tree: t}, nil
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
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return &Problems{Tool: v.tool, List: []Problem{{Path: "/", Text: "/: value could not be validated"}}}
	}
	c := collector{tree: v.tree, args: args, list: make([]Problem, 0, min(leaves(ve), 32))}
	c.walk(ve)
	list := c.problems()
	if len(list) == 0 {
		list = []Problem{{Path: "/", Text: "/: does not match the schema"}}
	}
	return &Problems{Tool: v.tool, List: list}
}
