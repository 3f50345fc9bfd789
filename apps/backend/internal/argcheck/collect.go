package argcheck

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
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
	unknown []unknownGroup     // one per rendered path, in order of discovery
	byPath  map[string]int     // index of unknown once it grows
	pnDepth map[int]bool       // depths already searched for propertyNames failures
	located map[string]located // by instance location (two segments or more), length-prefixed segments
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
		l := c.tree.loc(e.SchemaURL)
		c.unknownAt(e.InstanceLocation, l.own, l.ok, k.Properties)
	case *kind.FalseSchema:
		c.falseSchema(e)
	case *kind.PropertyNames:
		c.propertyNames(len(e.InstanceLocation))
	case *kind.Required:
		path, _, _ := c.locate(e.InstanceLocation)
		l := c.tree.loc(e.SchemaURL)
		for _, name := range k.Missing {
			c.list = append(c.list, Problem{Path: path, Text: l.missing(path, name)})
		}
	default:
		path, _, _ := c.locate(e.InstanceLocation)
		c.list = append(c.list, Problem{Path: path, Text: c.leafProblem(e, path)})
	}
}

// numKinds is the number of kinds whose wording is cached (see kindIndex).
const numKinds = 18

// kindIndex numbers the kinds whose wording depends only on the schema
// location that failed (never on the caller's value), or returns -1.
func kindIndex(k jsonschema.ErrorKind) int {
	switch k.(type) {
	case *kind.Type:
		return 0
	case *kind.MaxLength:
		return 1
	case *kind.MinLength:
		return 2
	case *kind.Maximum:
		return 3
	case *kind.Minimum:
		return 4
	case *kind.ExclusiveMaximum:
		return 5
	case *kind.ExclusiveMinimum:
		return 6
	case *kind.MultipleOf:
		return 7
	case *kind.MaxItems:
		return 8
	case *kind.MinItems:
		return 9
	case *kind.MaxProperties:
		return 10
	case *kind.MinProperties:
		return 11
	case *kind.UniqueItems:
		return 12
	case *kind.Enum:
		return 13
	case *kind.Const:
		return 14
	case *kind.Pattern:
		return 15
	case *kind.Format:
		return 16
	case *kind.Not:
		return 17
	}
	return -1
}

// leafProblem words one keyword failure at path as "<path>: text", with the
// text cached per schema location and kind, and the whole sentence for the
// first path it was worded for.
func (c *collector) leafProblem(e *jsonschema.ValidationError, path string) string {
	i := kindIndex(e.ErrorKind)
	if i < 0 {
		return path + ": " + c.leafText(e)
	}
	l := c.tree.loc(e.SchemaURL)
	if f := l.full[i].Load(); f != nil && f.path == path {
		return f.text
	}
	p := &l.texts[i]
	text := p.Load()
	if text == nil {
		s := c.leafText(e)
		p.CompareAndSwap(nil, &s)
		text = p.Load()
	}
	full := path + ": " + *text
	l.full[i].CompareAndSwap(nil, &pathText{path: path, text: full})
	return full
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
// that is not a declared property name with "*". It also returns the locus
// of subschemas and the instance value found there. Locations of two
// segments or more are memoised per call, so sibling errors share the walk
// from the root.
func (c *collector) locate(loc []string) (string, *locus, any) {
	switch len(loc) {
	case 0:
		return "/", c.tree.top, c.args
	case 1:
		return c.step("/", c.tree.top, c.args, loc[0])
	}
	path, l, inst := c.locateMemo(loc[:len(loc)-1])
	return c.step(path, l, inst, loc[len(loc)-1])
}

func (c *collector) locateMemo(loc []string) (string, *locus, any) {
	if len(loc) < 2 {
		return c.locate(loc)
	}
	var buf [128]byte
	key := buf[:0]
	for _, seg := range loc {
		key = binary.AppendUvarint(key, uint64(len(seg)))
		key = append(key, seg...)
	}
	if l, ok := c.located[string(key)]; ok {
		return l.path, l.locus, l.inst
	}
	var l located
	l.path, l.locus, l.inst = c.locate(loc)
	if c.located == nil {
		c.located = map[string]located{}
	}
	c.located[string(key)] = l
	return l.path, l.locus, l.inst
}

type located struct {
	path  string
	locus *locus
	inst  any
}

// step moves one segment down from an instance location.
func (c *collector) step(path string, l *locus, inst any, seg string) (string, *locus, any) {
	switch x := inst.(type) {
	case map[string]any:
		next, tok, decl := c.tree.propStep(l, seg)
		if !decl {
			return joinSeg(path, "/*"), next, x[seg]
		}
		return joinSeg(path, tok), next, x[seg]
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(x) {
			return joinSeg(path, "/*"), c.tree.none, nil
		}
		p, next := c.tree.itemStep(l, path, i)
		return p, next, x[i]
	}
	return joinSeg(path, "/*"), c.tree.none, nil
}

// alternatives words a failed oneOf/anyOf. Objects told apart by a string
// `type` or `kind` const get the chosen branch's own problems.
func (c *collector) alternatives(e *jsonschema.ValidationError, kw string) {
	path, _, inst := c.locate(e.InstanceLocation)
	d := c.tree.disc(c.tree.loc(e.SchemaURL), kw)
	obj, isObj := inst.(map[string]any)
	prop, consts := d.prop, d.consts
	if !isObj || prop == "" || d.branches != len(e.Causes) {
		c.list = append(c.list, Problem{Path: path, Text: path + ": does not match any allowed shape (" + kw + ")"})
		return
	}
	val, present := obj[prop]
	if !present {
		c.list = append(c.list, Problem{Path: path, Text: path + " is missing required " + strconv.Quote(prop)})
		return
	}
	for i, cv := range consts {
		if s, ok := val.(string); ok && s == cv {
			c.walk(e.Causes[d.branchOf[i]])
			return
		}
	}
	sub := joinPath(path, prop)
	c.list = append(c.list, Problem{Path: sub, Text: sub + ": must be one of: " + d.list + " (const)"})
}

// discriminator finds a property ("type", then "kind") that every branch
// declares with a string const or an enum of strings, and returns those
// values in branch order with the branch of each.
func (t *tree) discriminator(branches []any) (string, []string, []int) {
	if len(branches) < 2 {
		return "", nil, nil
	}
	for _, prop := range []string{"type", "kind"} {
		var values []string
		var branchOf []int
		found := 0
		for i, b := range branches {
			if vs := t.valuesOf(b, prop); len(vs) > 0 {
				found++
				values = append(values, vs...)
				for range vs {
					branchOf = append(branchOf, i)
				}
			}
		}
		if found == len(branches) {
			return prop, values, branchOf
		}
	}
	return "", nil, nil
}

// valuesOf returns the string values a branch allows for prop: its const,
// or the strings of its enum.
func (t *tree) valuesOf(branch any, prop string) []string {
	for _, n := range t.expand([]any{branch}) {
		props, _ := n.(map[string]any)["properties"].(map[string]any)
		p, _ := props[prop].(map[string]any)
		if cv, ok := p["const"].(string); ok {
			return []string{cv}
		}
		if enum, ok := p["enum"].([]any); ok {
			var out []string
			for _, v := range enum {
				if s, ok := v.(string); ok {
					out = append(out, s)
				}
			}
			return out
		}
	}
	return nil
}

// falseSchema handles a `false` subschema. Under unevaluatedProperties it is
// an unknown key, reported at the parent object without the key.
func (c *collector) falseSchema(e *jsonschema.ValidationError) {
	loc := e.InstanceLocation
	i := strings.LastIndexByte(e.SchemaURL, '/')
	if i >= 0 && e.SchemaURL[i+1:] == "unevaluatedProperties" && len(loc) > 0 {
		parent := c.tree.loc(e.SchemaURL[:i])
		allowed := emptyNames
		if parent.ok {
			allowed = parent.all
		}
		if allowed.contains(loc[len(loc)-1]) {
			// A declared property left unevaluated because its subschema
			// failed: that failure is reported on its own.
			return
		}
		c.unknownAt(loc[:len(loc)-1], allowed, parent.ok, loc[len(loc)-1:])
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

// joinSeg appends a segment ("/" and an escaped token) to a rendered path.
func joinSeg(path, seg string) string {
	if path == "/" {
		return seg
	}
	return path + seg
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
