package schemabudget

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// checker holds one Check's state.
type checker struct {
	lim     Limits
	root    *node
	d       dialect
	anchors map[string]*node
	pending []pendingRef
	est     *Estimate
}

// pendingRef is a reference found by the document walk, resolved once
// every anchor is known.
type pendingRef struct {
	n    *node
	slot int
	ref  string
}

// refKeywords are the reference keywords by slot of node.ref.
var refKeywords = [3]string{"$ref", "$dynamicRef", "$recursiveRef"}

func (c *checker) run() *Refusal {
	if c.root.kind != kObject {
		return &Refusal{Limit: LimitRoot, Detail: "an input schema must be a JSON object"}
	}
	c.d = draft2020
	if s := c.root.get("$schema"); s != nil {
		d, ok := dialectOf(s.str)
		if s.kind != kString || !ok {
			return &Refusal{Limit: LimitDialect, Detail: "unsupported $schema (supported: draft-07, 2019-09, 2020-12)"}
		}
		c.d = d
	}
	c.est.Dialect = c.d.String()
	if r := c.walk(c.root); r != nil {
		return r
	}
	for _, p := range c.pending {
		t, r := c.resolve(p.ref)
		if r != nil {
			r.At = pathOf(p.n.path() + "/" + refKeywords[p.slot])
			return r
		}
		p.n.ref[p.slot] = t
	}
	c.pending = nil
	return c.expand()
}

// walk inspects every schema object in a subschema position below n, used
// or not (recursion bounded by the document depth, already checked).
func (c *checker) walk(n *node) *Refusal {
	if n.kind != kObject {
		return nil
	}
	if r := c.inspect(n, true); r != nil {
		return r
	}
	var err *Refusal
	positions(n, func(sub *node) {
		if err == nil {
			err = c.walk(sub)
		}
	})
	return err
}

// inspect checks one schema object's own keywords and counts what it
// declares. During the document walk it registers anchors and defers
// references; nodes first reached through a reference resolve theirs at
// once.
func (c *checker) inspect(n *node, walking bool) *Refusal {
	if n.inspected {
		return nil
	}
	n.inspected = true
	c.est.Work += len(n.keys)
	if c.est.Schemas++; c.est.Schemas > c.lim.Schemas {
		return &Refusal{Limit: LimitSchemas, Detail: fmt.Sprintf("schema holds more than %d subschemas", c.lim.Schemas), At: pathOf(n.path())}
	}
	for i, k := range n.keys {
		if r := c.keyword(n, k, n.vals[i], walking); r != nil {
			return r
		}
	}
	if c.est.Properties > c.lim.Properties {
		return &Refusal{Limit: LimitProperties, Detail: fmt.Sprintf("schema declares more than %d property names", c.lim.Properties), At: pathOf(n.path())}
	}
	if c.est.Enum > c.lim.Enum {
		return &Refusal{Limit: LimitEnum, Detail: fmt.Sprintf("schema declares more than %d enum values", c.lim.Enum), At: pathOf(n.path())}
	}
	return nil
}

// keyword checks and counts one keyword k of the schema object n.
func (c *checker) keyword(n *node, k string, v *node, walking bool) *Refusal {
	switch k {
	case "$schema":
		if n != c.root {
			return &Refusal{Limit: LimitDialect, Detail: "$schema below the root is not supported", At: pathOf(n.path())}
		}
	case "$id":
		if n == c.root || v.kind != kString {
			return nil
		}
		if !strings.HasPrefix(v.str, "#") {
			return &Refusal{Limit: LimitResource, Detail: "$id below the root (an embedded schema resource) is not supported", At: pathOf(n.path())}
		}
		if walking {
			return c.anchor(strings.TrimPrefix(v.str, "#"), n)
		}
	case "$anchor", "$dynamicAnchor":
		if v.kind == kString && walking {
			return c.anchor(v.str, n)
		}
	case "properties", "patternProperties", "dependentSchemas", "dependentRequired", "dependencies":
		if v.kind == kObject {
			c.est.Properties += len(v.keys)
		}
	case "required":
		if v.kind == kArray {
			c.est.Properties += len(v.vals)
		}
	case "enum":
		if v.kind == kArray {
			c.est.Enum += len(v.vals)
		}
	}
	for slot, kw := range refKeywords {
		if k != kw || v.kind != kString {
			continue
		}
		if walking {
			c.pending = append(c.pending, pendingRef{n: n, slot: slot, ref: v.str})
			return nil
		}
		t, r := c.resolve(v.str)
		if r != nil {
			r.At = pathOf(n.path() + "/" + kw)
			return r
		}
		n.ref[slot] = t
	}
	return nil
}

// anchor registers a plain-name anchor; one name on two schemas is refused
// (resolvers disagree on which wins).
func (c *checker) anchor(name string, n *node) *Refusal {
	if prev, ok := c.anchors[name]; ok && prev != n {
		return &Refusal{Limit: LimitRefMissing, Detail: "two schemas declare the same anchor", At: pathOf(n.path())}
	}
	c.anchors[name] = n
	return nil
}

// resolve finds a reference's target inside the document: only fragment
// references ("#", "#/json/pointer", "#anchor") are local; the fragment is
// percent-decoded, then each pointer token ~1/~0-unescaped.
func (c *checker) resolve(ref string) (*node, *Refusal) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, &Refusal{Limit: LimitRefRemote, Detail: "a reference points outside the schema (another document, file:, http:, urn:)"}
	}
	missing := &Refusal{Limit: LimitRefMissing, Detail: "a reference does not resolve to a schema in the document"}
	dec, err := url.PathUnescape(frag)
	if err != nil {
		return nil, missing
	}
	var t *node
	switch {
	case dec == "":
		t = c.root
	case !strings.HasPrefix(dec, "/"):
		t = c.anchors[dec]
	default:
		t = c.pointer(dec)
	}
	if !t.isSchema() {
		return nil, missing
	}
	return t, nil
}

// pointer walks an RFC 6901 pointer from the root.
func (c *checker) pointer(p string) *node {
	cur := c.root
	for _, tok := range strings.Split(p[1:], "/") {
		c.est.Work++
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(tok, "~0", ""), "~1", ""), "~") {
			return nil // "~" not followed by 0 or 1
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch cur.kind {
		case kObject:
			cur = cur.get(tok)
		case kArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.vals) || (len(tok) > 1 && tok[0] == '0') || tok[0] == '+' {
				return nil
			}
			cur = cur.vals[i]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}
