package argcheck

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// tree is the parsed schema document that messages are worded from. It is
// shared with the compiled schema and never mutated after Compile.
type tree struct {
	base     string                    // resource URL the schema was compiled under
	root     any                       // document decoded by jsonschema.UnmarshalJSON
	anchors  map[string]any            // "$anchor" / "$dynamicAnchor" name → subschema
	patterns map[string]*regexp.Regexp // patternProperties key → compiled regexp

	// propertyNames keywords: where they are (fragments, filled by index) and
	// their compiled subschemas by owning node (filled by Compile). The
	// validator reports a wrong instance location for propertyNames failures
	// (it does not copy the path), so such failures are located again here.
	pnFrags  []string
	pnNodes  []map[string]any
	pnSchema map[uintptr]*jsonschema.Schema

	// Caches of schema-side wording data (see cache.go).
	mu   sync.Mutex                            // serialises filling locs and loci
	locs atomic.Pointer[map[string]*schemaLoc] // by reported schema location; copied on write
	loci map[string]*locus                     // by subschema sequence
	top  *locus                                // the root instance location
	none *locus                                // no subschemas (past a scalar or a missing item)
}

// Limits of the wording data. The work a schema may cause is bounded before
// compiling, by schemabudget.Check.
const (
	maxSchemaDepth = 128 // nesting of the document
	maxExpand      = 64  // subschemas considered per instance location when wording messages
)

func newTree(base string, doc any) (*tree, error) {
	t := &tree{base: base, root: doc, anchors: map[string]any{}, patterns: map[string]*regexp.Regexp{},
		pnSchema: map[uintptr]*jsonschema.Schema{}, loci: map[string]*locus{}}
	if err := t.index(doc, "", 0); err != nil {
		return nil, err
	}
	t.top, _ = t.intern(t.expand([]any{doc}))
	t.none, _ = t.intern(nil)
	return t, nil
}

// index collects anchors, compiles patternProperties keys and notes where
// propertyNames keywords are. frag is v's location as a URL fragment.
func (t *tree) index(v any, frag string, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("schema nested deeper than %d levels", maxSchemaDepth)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, kw := range []string{"$anchor", "$dynamicAnchor"} {
			if name, ok := x[kw].(string); ok {
				t.anchors[name] = x
			}
		}
		if pp, ok := x["patternProperties"].(map[string]any); ok {
			for pat := range pp {
				if re, err := regexp.Compile(pat); err == nil {
					t.patterns[pat] = re
				}
			}
		}
		if _, ok := x["propertyNames"]; ok {
			t.pnFrags = append(t.pnFrags, frag+"/propertyNames")
			t.pnNodes = append(t.pnNodes, x)
		}
		for k, c := range x {
			if err := t.index(c, frag+"/"+url.PathEscape(pointerToken(k)), depth+1); err != nil {
				return err
			}
		}
	case []any:
		for i, c := range x {
			if err := t.index(c, frag+"/"+strconv.Itoa(i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// ref resolves a document-local reference: "#", "#/json/pointer" or "#anchor".
func (t *tree) ref(ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	return t.fragment(frag)
}

// at resolves an absolute schema location reported by the validator.
func (t *tree) at(loc string) (any, bool) {
	base, frag, _ := strings.Cut(loc, "#")
	if base != t.base {
		return nil, false
	}
	return t.fragment(frag)
}

func (t *tree) fragment(frag string) (any, bool) {
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, false
	}
	if frag == "" {
		return t.root, true
	}
	if !strings.HasPrefix(frag, "/") {
		n, ok := t.anchors[frag]
		return n, ok
	}
	cur := t.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// expand returns the object subschemas that apply at one instance location:
// the given ones plus everything reachable through $ref and the in-place
// applicators. Boolean schemas are dropped; the result is capped.
func (t *tree) expand(nodes []any) []any {
	out := make([]any, 0, len(nodes))
	seen := map[string]bool{}
	var add func(n any, depth int)
	add = func(n any, depth int) {
		m, ok := n.(map[string]any)
		if !ok || depth > 16 || len(out) >= maxExpand {
			return
		}
		out = append(out, m)
		for _, kw := range []string{"$ref", "$dynamicRef"} {
			if r, ok := m[kw].(string); ok && !seen[r] {
				seen[r] = true
				if target, ok := t.ref(r); ok {
					add(target, depth+1)
				}
			}
		}
		for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
			arr, _ := m[kw].([]any)
			for _, s := range arr {
				add(s, depth+1)
			}
		}
		for _, kw := range []string{"if", "then", "else"} {
			add(m[kw], depth+1)
		}
		ds, _ := m["dependentSchemas"].(map[string]any)
		for _, k := range sortedKeys(ds) {
			add(ds[k], depth+1)
		}
	}
	for _, n := range nodes {
		add(n, 0)
	}
	return out
}

// propChild steps from the subschemas at an object into the value under key.
// declared reports whether key is a `properties` name of one of them; only
// then may the key appear in a message.
func (t *tree) propChild(nodes []any, key string) (next []any, declared bool) {
	for _, n := range nodes {
		m := n.(map[string]any)
		matched := false
		if props, ok := m["properties"].(map[string]any); ok {
			if s, ok := props[key]; ok {
				next, declared, matched = append(next, s), true, true
			}
		}
		pp, _ := m["patternProperties"].(map[string]any)
		for pat, s := range pp {
			if re := t.patterns[pat]; re != nil && re.MatchString(key) {
				next, matched = append(next, s), true
			}
		}
		if !matched {
			if s, ok := m["additionalProperties"]; ok {
				next = append(next, s)
			} else if s, ok := m["unevaluatedProperties"]; ok {
				next = append(next, s)
			}
		}
	}
	return t.expand(next), declared
}

// itemChild steps from the subschemas at an array into item i.
func (t *tree) itemChild(nodes []any, i int) []any {
	var next []any
	for _, n := range nodes {
		m := n.(map[string]any)
		if pre, ok := m["prefixItems"].([]any); ok && i < len(pre) {
			next = append(next, pre[i])
		} else if s, ok := m["items"]; ok {
			next = append(next, s)
		} else if s, ok := m["unevaluatedItems"]; ok {
			next = append(next, s)
		}
	}
	return t.expand(next)
}

// declared returns the sorted `properties` names of the given subschemas.
func declared(nodes []any) []string {
	set := map[string]bool{}
	for _, n := range nodes {
		if m, ok := n.(map[string]any); ok {
			props, _ := m["properties"].(map[string]any)
			for k := range props {
				set[k] = true
			}
		}
	}
	return sortedKeys(set)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// nodeID identifies a schema object of the tree (maps are never copied).
func nodeID(m any) uintptr {
	return reflect.ValueOf(m).Pointer()
}

// pointerToken escapes a declared name for a JSON pointer.
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
