package argcheck

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// The wording of a message depends on the caller's arguments only through
// the instance locations and the keys that fail; everything else is a pure
// function of the schema. Those schema-side results are computed once per
// validator, on first use, and shared by every later call: per reported
// schema location (schemaLoc) and per set of subschemas applying at an
// instance location (locus). Both caches are filled under tree.mu and read
// without locking; their sizes are bounded by the schema, not by callers,
// and capped besides (past the cap results are computed but not kept).

// maxCached caps each cache of the tree.
const maxCached = 1024

// nameSet is a sorted list of declared property names with what the
// unknown-field wording needs of it, rendered once.
type nameSet struct {
	names []string
	runes [][]rune // each name as runes
	ascii []bool   // each name is ASCII
	list  string   // limitedList(names, maxAllowedBytes)
	did   []string // ` (did you mean "name"?)` for each name
	// the first single-key unknown-field sentence worded with these names
	one atomic.Pointer[groupText]
}

// groupText is an unknown-field sentence for one path and suggestion.
type groupText struct {
	path string
	hit  int // index of the suggested name, or -1
	text string
}

var emptyNames = newNameSet(nil)

func newNameSet(names []string) *nameSet {
	s := &nameSet{names: names, runes: make([][]rune, len(names)), ascii: make([]bool, len(names)), did: make([]string, len(names))}
	for i, n := range names {
		s.runes[i] = []rune(n)
		s.ascii[i] = isASCII(n)
		s.did[i] = " (did you mean " + strconv.Quote(n) + "?)"
	}
	s.list = limitedList(names, maxAllowedBytes)
	return s
}

func (s *nameSet) contains(name string) bool {
	_, found := slices.BinarySearch(s.names, name)
	return found
}

// union returns the names of s and o, sorted and deduplicated.
func (s *nameSet) union(o *nameSet) *nameSet {
	switch {
	case s == o || len(o.names) == 0:
		return s
	case len(s.names) == 0:
		return o
	case slices.Equal(s.names, o.names):
		return s
	}
	merged := make([]string, 0, len(s.names)+len(o.names))
	merged = append(merged, s.names...)
	merged = append(merged, o.names...)
	slices.Sort(merged)
	return newNameSet(slices.Compact(merged))
}

// schemaLoc is what messages need of one schema location reported by the
// validator (an error's SchemaURL).
type schemaLoc struct {
	node any
	ok   bool     // node was found in the document
	own  *nameSet // `properties` names of node itself
	all  *nameSet // `properties` names of node with its in-place applicators expanded
	// leaf texts by kind (see kindIndex), worded on first use, and the
	// whole problem sentence for the first instance path worded
	texts [numKinds]atomic.Pointer[string]
	full  [numKinds]atomic.Pointer[pathText]
	// "<path> is missing required <name>" for the first path worded
	required atomic.Pointer[requiredTexts]
	// discriminators of node's oneOf and anyOf, found on first use
	oneOf, anyOf atomic.Pointer[discInfo]
}

// pathText is a problem sentence worded for one instance path.
type pathText struct {
	path, text string
}

// requiredTexts are the missing-required sentences for one instance path,
// by required name.
type requiredTexts struct {
	path   string
	byName map[string]string
}

func missingText(path, name string) string {
	return path + " is missing required " + strconv.Quote(name)
}

// missing words a missing required property at path.
func (l *schemaLoc) missing(path, name string) string {
	r := l.required.Load()
	if r == nil {
		m, _ := l.node.(map[string]any)
		req, _ := m["required"].([]any)
		byName := make(map[string]string, len(req))
		for _, x := range req {
			if n, ok := x.(string); ok {
				byName[n] = missingText(path, n)
			}
		}
		l.required.CompareAndSwap(nil, &requiredTexts{path: path, byName: byName})
		r = l.required.Load()
	}
	if r.path == path {
		if s, ok := r.byName[name]; ok {
			return s
		}
	}
	return missingText(path, name)
}

// discInfo describes the branches of a oneOf/anyOf.
type discInfo struct {
	branches int
	prop     string   // "type" or "kind", "" when the branches have no discriminator
	consts   []string // its values (a const, or an enum's strings), branch after branch
	branchOf []int    // the branch of each of consts
	list     string   // the distinct consts joined with ", "
}

// loc returns the cached data for a reported schema location.
func (t *tree) loc(url string) *schemaLoc {
	if m := t.locs.Load(); m != nil {
		if l := (*m)[url]; l != nil {
			return l
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.locs.Load()
	if old != nil {
		if l := (*old)[url]; l != nil {
			return l
		}
	}
	node, ok := t.at(url)
	l := &schemaLoc{node: node, ok: ok, own: emptyNames, all: emptyNames}
	if ok {
		l.own = newNameSet(declared([]any{node}))
		l.all = newNameSet(declared(t.expand([]any{node})))
	}
	if old == nil || len(*old) < maxCached {
		m := make(map[string]*schemaLoc, 1+len(nilMap(old)))
		for k, v := range nilMap(old) {
			m[k] = v
		}
		m[url] = l
		t.locs.Store(&m)
	}
	return l
}

func nilMap[V any](p *map[string]V) map[string]V {
	if p == nil {
		return nil
	}
	return *p
}

// disc returns the discriminator of the node's oneOf or anyOf branches.
func (t *tree) disc(l *schemaLoc, kw string) *discInfo {
	p := &l.anyOf
	if kw == "oneOf" {
		p = &l.oneOf
	}
	if d := p.Load(); d != nil {
		return d
	}
	m, _ := l.node.(map[string]any)
	branches, _ := m[kw].([]any)
	prop, consts, branchOf := t.discriminator(branches)
	d := &discInfo{branches: len(branches), prop: prop, consts: consts, branchOf: branchOf}
	if prop != "" {
		d.list = strings.Join(dedupe(consts), ", ")
	}
	p.CompareAndSwap(nil, d)
	return p.Load()
}

// locus is the set of expanded subschemas that apply at an instance
// location, interned by the exact sequence of subschemas, with lazily
// resolved steps into its children. Everything derived from a locus
// depends only on that sequence.
type locus struct {
	nodes   []any            // expanded subschemas, as tree.expand returns them
	props   map[string]*edge // declared `properties` names
	other   edge             // any other key, when no patternProperties apply
	pattern bool             // some node has patternProperties: other keys are stepped into one by one
	prefix  []edge           // array positions covered by some node's prefixItems
	items   edge             // array positions past every prefixItems
}

// edge is one step from a locus, resolved on first use.
type edge struct {
	seg  string // "/" + the escaped name, for a declared property
	next atomic.Pointer[locus]
	item atomic.Pointer[itemPath] // for an array step, the first path rendered
}

// itemPath is the rendered path of item i of the array at parent.
type itemPath struct {
	parent string
	i      int
	path   string
}

// intern returns the locus for an exact sequence of expanded subschemas,
// and whether it is kept (false past the cap).
func (t *tree) intern(nodes []any) (*locus, bool) {
	key := make([]byte, 0, 8*len(nodes))
	for _, n := range nodes {
		key = binary.LittleEndian.AppendUint64(key, uint64(nodeID(n)))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.loci[string(key)]; l != nil {
		return l, true
	}
	l := newLocus(nodes)
	if len(t.loci) >= maxCached {
		return l, false
	}
	t.loci[string(key)] = l
	return l, true
}

func newLocus(nodes []any) *locus {
	l := &locus{nodes: nodes, props: map[string]*edge{}}
	maxPrefix := 0
	for _, n := range nodes {
		m := n.(map[string]any)
		props, _ := m["properties"].(map[string]any)
		for name := range props {
			if l.props[name] == nil {
				l.props[name] = &edge{seg: "/" + pointerToken(name)}
			}
		}
		if pp, _ := m["patternProperties"].(map[string]any); len(pp) > 0 {
			l.pattern = true
		}
		if pre, ok := m["prefixItems"].([]any); ok {
			maxPrefix = max(maxPrefix, len(pre))
		}
	}
	l.prefix = make([]edge, maxPrefix)
	return l
}

// follow resolves an edge, computing its target with nodes on first use. A
// target past the cap of the interned loci is not kept on the edge either.
func (t *tree) follow(e *edge, nodes func() []any) *locus {
	if n := e.next.Load(); n != nil {
		return n
	}
	n, kept := t.intern(nodes())
	if !kept {
		return n
	}
	e.next.CompareAndSwap(nil, n)
	return e.next.Load()
}

// propStep steps from the locus of an object into the value under key. The
// second result reports whether key is a declared property name (only then
// may it appear in a message), and if so its escaped path segment.
func (t *tree) propStep(l *locus, key string) (*locus, string, bool) {
	if e := l.props[key]; e != nil {
		return t.follow(e, func() []any { next, _ := t.propChild(l.nodes, key); return next }), e.seg, true
	}
	if l.pattern {
		next, _ := t.propChild(l.nodes, key)
		n, _ := t.intern(next)
		return n, "", false
	}
	return t.follow(&l.other, func() []any { next, _ := t.propChild(l.nodes, key); return next }), "", false
}

// itemStep steps from the locus of an array at path into item i, and
// renders the item's path.
func (t *tree) itemStep(l *locus, path string, i int) (string, *locus) {
	e := &l.items
	if i < len(l.prefix) {
		e = &l.prefix[i]
	}
	next := t.follow(e, func() []any { return t.itemChild(l.nodes, i) })
	if p := e.item.Load(); p != nil && p.i == i && p.parent == path {
		return p.path, next
	}
	p := joinPath(path, strconv.Itoa(i))
	e.item.CompareAndSwap(nil, &itemPath{parent: path, i: i, path: p})
	return p, next
}
