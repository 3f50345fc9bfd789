// Package schemabudget decides, with bounded work, whether a JSON Schema
// that Kandev did not write (an upstream MCP server's tool input schema) is
// cheap enough to hand to the compiler and to validate calls against. Check
// reads the schema once, builds its own tree iteratively, and estimates what
// santhosh-tekuri/jsonschema/v6 would do with it: how deep it nests, how
// many subschema evaluations a full expansion from the root performs with
// every local $ref followed (memoised per node, so a bomb compressed into
// $defs is counted at its expanded cost while the estimate stays linear),
// how many $refs the longest path follows, how many properties and enum
// values it declares, and whether every number token is in range. It follows
// the dialect's rules as that compiler does (keywords beside $ref count in
// 2019-09 and 2020-12; in draft-07 only those the compiler still reads),
// percent-decodes and ~1/~0-unescapes pointer fragments before lookup,
// refuses cycles, and refuses any $ref it cannot resolve inside the
// document. A schema Check accepts is safe to compile; one it refuses never
// reaches the compiler.
//
// It imports only the standard library and internal/escape; it must not
// import the compiler, the MCP server or any domain package.
package schemabudget

import (
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/escape"
)

// Limits bound the schema and the work it may cause.
type Limits struct {
	Bytes      int // raw schema size
	Depth      int // JSON nesting of the document
	Schemas    int // schema objects in the document, used or not (each is checked against the metaschema)
	Visits     int // subschema evaluations of a full expansion from the root, $refs followed
	RefHops    int // $refs followed on the longest path from the root
	Properties int // declared property names (properties, patternProperties, dependent*, dependencies, required)
	Enum       int // enum values in the document
	NumberLen  int // characters of one number token
	NumberExp  int // magnitude of one number token's exponent
}

// DefaultLimits are the limits an upstream tool's input schema is held to.
// The byte limit is the secure compiler's own (argcheck.MaxSchemaBytes).
func DefaultLimits() Limits {
	return Limits{Bytes: 256 << 10, Depth: 64, Schemas: 10_000, Visits: 10_000, RefHops: 32, Properties: 2_000, Enum: 5_000,
		NumberLen: 64, NumberExp: 400}
}

// Limit names which rule refused a schema (stable, shown to operators).
type Limit string

// The reasons Check refuses a schema.
const (
	LimitBytes      Limit = "bytes"
	LimitSyntax     Limit = "syntax"
	LimitDepth      Limit = "depth"
	LimitNumber     Limit = "number"
	LimitDialect    Limit = "dialect"
	LimitRoot       Limit = "root"
	LimitResource   Limit = "embedded_resource"
	LimitRefRemote  Limit = "ref_nonlocal"
	LimitRefMissing Limit = "ref_unresolved"
	LimitRefCycle   Limit = "ref_cycle"
	LimitRefHops    Limit = "ref_hops"
	LimitSchemas    Limit = "schemas"
	LimitVisits     Limit = "visits"
	LimitProperties Limit = "properties"
	LimitEnum       Limit = "enum"
)

// maxPathBytes bounds a JSON pointer shown in a refusal (keys may be hostile).
const maxPathBytes = 120

// Refusal says why a schema was refused. Detail is built from the limit and
// measured numbers; At is the JSON pointer where it was found, escaped and
// clipped (keys come from the schema's author).
type Refusal struct {
	Limit  Limit
	Detail string
	At     string
}

func (r *Refusal) Error() string {
	if r.At == "" {
		return fmt.Sprintf("%s: %s", r.Limit, r.Detail)
	}
	return fmt.Sprintf("%s: %s (at %s)", r.Limit, r.Detail, r.At)
}

// Estimate is what Check measured.
type Estimate struct {
	Dialect    string // "2020-12", "2019-09" or "draft-07"
	Bytes      int
	Depth      int
	Schemas    int
	Visits     int // saturates just past the limit
	RefHops    int
	Properties int
	Enum       int
	// Work counts the steps Check took (tokens, nodes, edges): it is linear
	// in Bytes whatever the schema, which the tests assert.
	Work int
}

// Check estimates schema against lim. It returns the estimate and nil, or
// what it had measured and the refusal. It never panics on any input and
// its recursion depth is bounded by lim.Depth.
func Check(schema []byte, lim Limits) (Estimate, *Refusal) {
	e := Estimate{Bytes: len(schema)}
	if len(schema) > lim.Bytes {
		return e, &Refusal{Limit: LimitBytes, Detail: fmt.Sprintf("schema is %d bytes; the limit is %d", len(schema), lim.Bytes)}
	}
	root, st, ref := parse(schema, lim)
	e.Depth, e.Work = st.depth, st.tokens
	if ref != nil {
		return e, ref
	}
	c := &checker{lim: lim, root: root, anchors: map[string]*node{}, est: &e}
	if ref := c.run(); ref != nil {
		return e, ref
	}
	return e, nil
}

// pathOf renders a JSON pointer for a refusal: escaped and clipped.
func pathOf(p string) string {
	if p == "" {
		p = "/"
	}
	return escape.Excerpt(p, maxPathBytes)
}
