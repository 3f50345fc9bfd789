package schemabudget

import "strings"

// dialect is a JSON Schema draft as the compiler numbers it.
type dialect int

const (
	draft7    dialect = 7
	draft2019 dialect = 2019
	draft2020 dialect = 2020
)

func (d dialect) String() string {
	switch d {
	case draft7:
		return "draft-07"
	case draft2019:
		return "2019-09"
	}
	return "2020-12"
}

// dialectOf maps a root $schema to a supported dialect, exactly as the
// compiler recognises metaschema URLs (http or https, an empty fragment
// allowed). Draft-04 and draft-06 are not supported.
func dialectOf(url string) (dialect, bool) {
	u, frag, _ := strings.Cut(url, "#")
	if frag != "" {
		return 0, false
	}
	if s, ok := strings.CutPrefix(u, "http://"); ok {
		u = s
	} else {
		u = strings.TrimPrefix(u, "https://")
	}
	switch u {
	case "json-schema.org/schema", "json-schema.org/draft/2020-12/schema":
		return draft2020, true
	case "json-schema.org/draft/2019-09/schema":
		return draft2019, true
	case "json-schema.org/draft-07/schema":
		return draft7, true
	}
	return 0, false
}

// edge is one subschema the validator evaluates from a schema object.
type edge struct {
	to  *node
	ref bool // reached through $ref, $dynamicRef or $recursiveRef
}

// edges lists what the validator evaluates from the schema object n, by the
// compiler's rules for d: in draft-07 a $ref hides every draft-4 keyword
// beside it, but contains, propertyNames and if/then/else are still
// compiled; from 2019-09 on every keyword beside $ref counts. Values that
// are not schemas are skipped (the compiler refuses them).
func (d dialect) edges(n *node, out []edge) []edge {
	e := edgeList{out: out}
	for _, r := range n.ref {
		if r != nil {
			e.add(r, true)
		}
	}
	hidden := d < draft2019 && n.ref[0] != nil
	for i, k := range n.keys {
		v := n.vals[i]
		e.draft6(n, k, v)
		if !hidden {
			e.draft4(n, k, v, d)
		}
		if d >= draft2019 {
			e.draft2019(k, v, d)
		}
	}
	return e.out
}

type edgeList struct{ out []edge }

func (e *edgeList) add(c *node, ref bool) {
	if c.isSchema() {
		e.out = append(e.out, edge{to: c, ref: ref})
	}
}

func (e *edgeList) each(v *node) {
	for _, c := range v.vals {
		e.add(c, false)
	}
}

// draft6 are the keywords compiled even beside a draft-07 $ref.
func (e *edgeList) draft6(n *node, k string, v *node) {
	switch k {
	case "contains", "propertyNames":
		e.add(v, false)
	case "if":
		e.add(v, false)
		if then := n.get("then"); then != nil && (v.kind != kBool || v.bval) {
			e.add(then, false)
		}
		if els := n.get("else"); els != nil && (v.kind != kBool || !v.bval) {
			e.add(els, false)
		}
	}
}

func (e *edgeList) draft4(n *node, k string, v *node, d dialect) {
	switch k {
	case "allOf", "anyOf", "oneOf":
		if v.kind == kArray {
			e.each(v)
		}
	case "not", "additionalProperties":
		e.add(v, false)
	case "properties", "patternProperties", "dependencies":
		if v.kind == kObject {
			e.each(v)
		}
	case "items":
		if v.kind == kArray && d < draft2020 {
			e.each(v)
			if ai := n.get("additionalItems"); ai != nil {
				e.add(ai, false)
			}
		} else {
			e.add(v, false)
		}
	}
}

func (e *edgeList) draft2019(k string, v *node, d dialect) {
	switch k {
	case "dependentSchemas":
		if v.kind == kObject {
			e.each(v)
		}
	case "unevaluatedItems", "unevaluatedProperties":
		e.add(v, false)
	case "prefixItems":
		if d >= draft2020 && v.kind == kArray {
			e.each(v)
		}
	}
}

// positions calls f for every subschema position of the schema object n
// (what the document walk inspects, used or not): the evaluated keywords of
// every dialect plus the $defs and definitions containers.
func positions(n *node, f func(*node)) {
	each := func(v *node) {
		for _, c := range v.vals {
			if c.isSchema() {
				f(c)
			}
		}
	}
	for i, k := range n.keys {
		v := n.vals[i]
		switch k {
		case "allOf", "anyOf", "oneOf", "prefixItems":
			if v.kind == kArray {
				each(v)
			}
		case "properties", "patternProperties", "dependencies", "dependentSchemas", "$defs", "definitions":
			if v.kind == kObject {
				each(v)
			}
		case "items":
			if v.kind == kArray {
				each(v)
			} else if v.isSchema() {
				f(v)
			}
		case "not", "additionalProperties", "additionalItems", "contains", "propertyNames", "if", "then", "else",
			"unevaluatedItems", "unevaluatedProperties", "contentSchema":
			if v.isSchema() {
				f(v)
			}
		}
	}
}
