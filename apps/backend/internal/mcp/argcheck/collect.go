package argcheck

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// collector turns a jsonschema error tree into problems. It reads the kinds'
// schema-side fields (Want, Missing) and never their caller-side fields (Got,
// Properties, Property) except to count unknown keys and pick a suggestion.
type collector struct {
	tree    *tree
	args    any
	list    []Problem
	unknown map[string]*unknownGroup // by rendered path
	pnDepth map[int]bool             // depths already searched for propertyNames failures
	located map[string]located       // by instance location joined with NUL
}

// walk records the leaf problems under e.
func (c *collector) walk(e *jsonschema.ValidationError) {
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, cause := range e.Causes {
			c.walk(cause)
		}
	case *kind.OneOf:
		if k.Subschemas != nil {
			c.add(e.InstanceLocation, "matches more than one allowed shape (oneOf)")
			return
		}
		c.alternatives(e, "oneOf")
	case *kind.AnyOf:
		c.alternatives(e, "anyOf")
	case *kind.AdditionalProperties:
		node, ok := c.tree.at(e.SchemaURL)
		c.unknownAt(e.InstanceLocation, declared([]any{node}), ok, k.Properties)
	case *kind.FalseSchema:
		c.falseSchema(e)
	case *kind.PropertyNames:
		c.propertyNames(len(e.InstanceLocation))
	case *kind.Required:
		path, _, _ := c.locate(e.InstanceLocation)
		for _, name := range k.Missing {
			c.list = append(c.list, Problem{Path: path, Text: fmt.Sprintf("%s is missing required %q", path, name)})
		}
	default:
		c.add(e.InstanceLocation, c.leafText(e))
	}
}

// leafText words one keyword failure from schema data only.
func (c *collector) leafText(e *jsonschema.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return "expected " + strings.Join(c.types(e, k.Want), " or ")
	case *kind.MaxLength:
		return fmt.Sprintf("longer than %d characters (maxLength)", k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("shorter than %d characters (minLength)", k.Want)
	case *kind.Maximum:
		return "must be <= " + c.bound(e, "maximum", k.Want) + " (maximum)"
	case *kind.Minimum:
		return "must be >= " + c.bound(e, "minimum", k.Want) + " (minimum)"
	case *kind.ExclusiveMaximum:
		return "must be < " + c.bound(e, "exclusiveMaximum", k.Want) + " (exclusiveMaximum)"
	case *kind.ExclusiveMinimum:
		return "must be > " + c.bound(e, "exclusiveMinimum", k.Want) + " (exclusiveMinimum)"
	case *kind.MultipleOf:
		return "must be a multiple of " + c.bound(e, "multipleOf", k.Want) + " (multipleOf)"
	case *kind.MaxItems:
		return fmt.Sprintf("more than %d items (maxItems)", k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("fewer than %d items (minItems)", k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("more than %d properties (maxProperties)", k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("fewer than %d properties (minProperties)", k.Want)
	case *kind.UniqueItems:
		return "items must be unique (uniqueItems)"
	case *kind.Enum:
		return "must be one of: " + valueList(k.Want) + " (enum)"
	case *kind.Const:
		return "must be " + jsonText(k.Want) + " (const)"
	case *kind.Pattern:
		if len(k.Want) > 100 {
			return "does not match the required pattern (pattern)"
		}
		return "does not match pattern " + k.Want
	case *kind.Format:
		return "not a valid " + k.Want + " (format)"
	case *kind.InvalidJsonValue:
		return "not a JSON value"
	case *kind.Not:
		return "violates not"
	case *kind.RefCycle:
		return "violates $ref"
	}
	kw := e.ErrorKind.KeywordPath()
	if len(kw) == 0 {
		return "does not match the schema"
	}
	return "violates " + kw[0]
}

// add records a problem worded "<path>: text".
func (c *collector) add(loc []string, text string) {
	path, _, _ := c.locate(loc)
	c.list = append(c.list, Problem{Path: path, Text: path + ": " + text})
}

// locate renders an instance location as a JSON pointer, replacing every key
// that is not a declared property name with "*". It also returns the
// subschemas and the instance value found there. Results are memoised per
// location, so sibling errors share the walk from the root.
func (c *collector) locate(loc []string) (string, []any, any) {
	key := strings.Join(loc, "\x00")
	if len(loc) > 0 {
		key = "\x00" + key
	}
	if l, ok := c.located[key]; ok {
		return l.path, l.nodes, l.inst
	}
	var l located
	if len(loc) == 0 {
		l = located{path: "/", nodes: c.tree.expand([]any{c.tree.root}), inst: c.args}
	} else {
		path, nodes, inst := c.locate(loc[:len(loc)-1])
		l = c.step(path, nodes, inst, loc[len(loc)-1])
	}
	if c.located == nil {
		c.located = map[string]located{}
	}
	c.located[key] = l
	return l.path, l.nodes, l.inst
}

type located struct {
	path  string
	nodes []any
	inst  any
}

// step moves one segment down from an instance location.
func (c *collector) step(path string, nodes []any, inst any, seg string) located {
	switch x := inst.(type) {
	case map[string]any:
		next, decl := c.tree.propChild(nodes, seg)
		if !decl {
			return located{path: joinPath(path, "*"), nodes: next, inst: x[seg]}
		}
		return located{path: joinPath(path, seg), nodes: next, inst: x[seg]}
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(x) {
			return located{path: joinPath(path, "*")}
		}
		return located{path: joinPath(path, strconv.Itoa(i)), nodes: c.tree.itemChild(nodes, i), inst: x[i]}
	}
	return located{path: joinPath(path, "*")}
}

// alternatives words a failed oneOf/anyOf. Objects told apart by a string
// `type` or `kind` const get the chosen branch's own problems.
func (c *collector) alternatives(e *jsonschema.ValidationError, kw string) {
	path, _, inst := c.locate(e.InstanceLocation)
	node, _ := c.tree.at(e.SchemaURL)
	m, _ := node.(map[string]any)
	branches, _ := m[kw].([]any)
	obj, isObj := inst.(map[string]any)
	prop, consts := c.tree.discriminator(branches)
	if !isObj || prop == "" || len(branches) != len(e.Causes) {
		c.list = append(c.list, Problem{Path: path, Text: path + ": does not match any allowed shape (" + kw + ")"})
		return
	}
	val, present := obj[prop]
	if !present {
		c.list = append(c.list, Problem{Path: path, Text: fmt.Sprintf("%s is missing required %q", path, prop)})
		return
	}
	for i, cv := range consts {
		if s, ok := val.(string); ok && s == cv {
			c.walk(e.Causes[i])
			return
		}
	}
	sub := joinPath(path, prop)
	c.list = append(c.list, Problem{Path: sub, Text: sub + ": must be one of: " + strings.Join(dedupe(consts), ", ") + " (const)"})
}

// discriminator finds a property ("type", then "kind") that every branch
// declares with a string const, and returns the consts in branch order.
func (t *tree) discriminator(branches []any) (string, []string) {
	if len(branches) < 2 {
		return "", nil
	}
	for _, prop := range []string{"type", "kind"} {
		consts := make([]string, 0, len(branches))
		for _, b := range branches {
			if cv, ok := t.constOf(b, prop); ok {
				consts = append(consts, cv)
			}
		}
		if len(consts) == len(branches) {
			return prop, consts
		}
	}
	return "", nil
}

func (t *tree) constOf(branch any, prop string) (string, bool) {
	for _, n := range t.expand([]any{branch}) {
		props, _ := n.(map[string]any)["properties"].(map[string]any)
		p, _ := props[prop].(map[string]any)
		if cv, ok := p["const"].(string); ok {
			return cv, true
		}
	}
	return "", false
}

// falseSchema handles a `false` subschema. Under unevaluatedProperties it is
// an unknown key, reported at the parent object without the key.
func (c *collector) falseSchema(e *jsonschema.ValidationError) {
	loc := e.InstanceLocation
	i := strings.LastIndexByte(e.SchemaURL, '/')
	if i >= 0 && e.SchemaURL[i+1:] == "unevaluatedProperties" && len(loc) > 0 {
		parent, ok := c.tree.at(e.SchemaURL[:i])
		var allowed []string
		if ok {
			allowed = declared(c.tree.expand([]any{parent}))
		}
		if slices.Contains(allowed, loc[len(loc)-1]) {
			// A declared property left unevaluated because its subschema
			// failed: that failure is reported on its own.
			return
		}
		c.unknownAt(loc[:len(loc)-1], allowed, ok, loc[len(loc)-1:])
		return
	}
	c.add(loc, "not allowed (false schema)")
}

// types returns the declared type names in the schema's own order.
func (c *collector) types(e *jsonschema.ValidationError, want []string) []string {
	node, _ := c.tree.at(e.SchemaURL)
	m, _ := node.(map[string]any)
	switch t := m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		if len(out) == len(t) {
			return out
		}
	}
	return want
}

// bound renders a declared numeric bound as written in the schema.
func (c *collector) bound(e *jsonschema.ValidationError, keyword string, want *big.Rat) string {
	if node, ok := c.tree.at(e.SchemaURL); ok {
		if m, ok := node.(map[string]any); ok {
			if n, ok := m[keyword].(json.Number); ok {
				return n.String()
			}
		}
	}
	if want == nil {
		return "the declared bound"
	}
	if want.IsInt() {
		return want.Num().String()
	}
	return strings.TrimRight(want.FloatString(12), "0")
}

func joinPath(path, name string) string {
	if path == "/" {
		return "/" + pointerToken(name)
	}
	return path + "/" + pointerToken(name)
}

// valueList renders declared enum values: strings as is, others as JSON.
func valueList(values []any) string {
	const max = 20
	parts := make([]string, 0, min(len(values), max))
	for i, v := range values {
		if i == max {
			return strings.Join(parts, ", ") + ", ..."
		}
		if s, ok := v.(string); ok {
			parts = append(parts, s)
		} else {
			parts = append(parts, jsonText(v))
		}
	}
	return strings.Join(parts, ", ")
}

func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "the declared value"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	out := list[:0:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
