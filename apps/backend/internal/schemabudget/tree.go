package schemabudget

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

type kind uint8

const (
	kObject kind = iota + 1
	kArray
	kString
	kNumber
	kBool
	kNull
)

// node is one JSON value of the schema document. Objects keep their keys in
// document order; parent and idx let a refusal name where it happened
// without every node carrying its path.
type node struct {
	kind   kind
	keys   []string
	vals   []*node // object values or array items
	str    string  // string value or number token
	bval   bool
	parent *node
	idx    int

	// checker state
	inspected    bool
	color        uint8 // expansion: 0 unseen, 1 on the stack, 2 done
	visits, hops int
	ref          [3]*node // resolved $ref, $dynamicRef, $recursiveRef
}

// get returns the value of key in an object, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// isSchema reports whether n can be a schema (an object or a boolean).
func (n *node) isSchema() bool { return n != nil && (n.kind == kObject || n.kind == kBool) }

// path renders n's JSON pointer (RFC 6901 escaping).
func (n *node) path() string {
	var segs []string
	for c := n; c.parent != nil; c = c.parent {
		if c.parent.kind == kObject {
			segs = append(segs, strings.ReplaceAll(strings.ReplaceAll(c.parent.keys[c.idx], "~", "~0"), "/", "~1"))
		} else {
			segs = append(segs, strconv.Itoa(c.idx))
		}
		if len(segs) > 16 {
			segs = append(segs, "...")
			break
		}
	}
	var b strings.Builder
	for i := len(segs) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(segs[i])
	}
	return b.String()
}

type parseStats struct{ depth, tokens int }

// frame is an open container while parsing.
type frame struct {
	n    *node
	key  string // pending object key
	has  bool   // key pending
	seen map[string]struct{}
}

// parse reads the document token by token (no recursion), refusing invalid
// UTF-8, syntax errors, trailing data, duplicate keys, nesting past
// lim.Depth and number tokens out of range.
func parse(doc []byte, lim Limits) (*node, parseStats, *Refusal) {
	var st parseStats
	if !utf8.Valid(doc) {
		return nil, st, &Refusal{Limit: LimitSyntax, Detail: "schema is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var root *node
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, st, &Refusal{Limit: LimitSyntax, Detail: "schema is not valid JSON"}
		}
		st.tokens++
		if root != nil && len(stack) == 0 {
			return nil, st, &Refusal{Limit: LimitSyntax, Detail: "schema has data after its end"}
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.n.kind == kObject && !top.has {
			key := tok.(string) // the decoder only yields strings in key position
			if dupKey(top, key) {
				return nil, st, &Refusal{Limit: LimitSyntax, Detail: "schema repeats an object key", At: pathOf(top.n.path())}
			}
			top.key, top.has = key, true
			continue
		}
		n, ref := value(tok, top, lim)
		if ref != nil {
			return nil, st, ref
		}
		if root == nil {
			root = n
		}
		if n.kind == kObject || n.kind == kArray {
			stack = append(stack, &frame{n: n})
			st.depth = max(st.depth, len(stack))
			if len(stack) > lim.Depth {
				return nil, st, &Refusal{Limit: LimitDepth, Detail: fmt.Sprintf("schema nests deeper than %d levels", lim.Depth), At: pathOf(n.path())}
			}
		}
	}
	if root == nil {
		return nil, st, &Refusal{Limit: LimitSyntax, Detail: "schema is empty"}
	}
	return root, st, nil
}

// dupKey records key in an object frame and reports whether it was there.
func dupKey(f *frame, key string) bool {
	if f.seen == nil && len(f.n.keys) < 8 {
		for _, k := range f.n.keys {
			if k == key {
				return true
			}
		}
		return false
	}
	if f.seen == nil {
		f.seen = make(map[string]struct{}, 16)
		for _, k := range f.n.keys {
			f.seen[k] = struct{}{}
		}
	}
	if _, ok := f.seen[key]; ok {
		return true
	}
	f.seen[key] = struct{}{}
	return false
}

func attach(top *frame, n *node) {
	if top == nil {
		return
	}
	n.parent, n.idx = top.n, len(top.n.vals)
	if top.n.kind == kObject {
		top.n.keys = append(top.n.keys, top.key)
		top.has = false
	}
	top.n.vals = append(top.n.vals, n)
}

// value makes the node of a value token and attaches it to the open
// container top.
func value(tok json.Token, top *frame, lim Limits) (*node, *Refusal) {
	n, ref := leaf(tok, lim)
	if ref != nil {
		if top != nil {
			ref.At = pathOf(top.n.path())
		}
		return nil, ref
	}
	attach(top, n)
	return n, nil
}

func leaf(tok json.Token, lim Limits) (*node, *Refusal) {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return &node{kind: kObject}, nil
		}
		return &node{kind: kArray}, nil
	case string:
		return &node{kind: kString, str: v}, nil
	case json.Number:
		if r := checkNumber(string(v), lim); r != nil {
			return nil, r
		}
		return &node{kind: kNumber, str: string(v)}, nil
	case bool:
		return &node{kind: kBool, bval: v}, nil
	}
	return &node{kind: kNull}, nil
}

// checkNumber refuses number tokens longer than lim.NumberLen characters or
// with an exponent beyond ±lim.NumberExp: the compiler turns numbers into
// exact rationals, and 1e1000001 would cost a million-digit integer (and
// crashes the validator).
func checkNumber(tok string, lim Limits) *Refusal {
	if len(tok) > lim.NumberLen {
		return &Refusal{Limit: LimitNumber, Detail: fmt.Sprintf("a number token is %d characters long; the limit is %d", len(tok), lim.NumberLen)}
	}
	i := strings.IndexAny(tok, "eE")
	if i < 0 {
		return nil
	}
	exp := strings.TrimLeft(strings.TrimLeft(tok[i+1:], "+-"), "0")
	if v, err := strconv.Atoi(exp); exp != "" && (err != nil || v > lim.NumberExp) {
		return &Refusal{Limit: LimitNumber, Detail: fmt.Sprintf("a number's exponent exceeds ±%d", lim.NumberExp)}
	}
	return nil
}
