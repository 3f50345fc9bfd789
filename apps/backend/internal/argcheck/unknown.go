package argcheck

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// unknownGroup gathers the unknown keys found at one object. The keys are
// caller data: they are counted and compared, never rendered.
type unknownGroup struct {
	path    string
	allowed *nameSet
	known   bool            // the object's schema was found, so allowed is meaningful
	keys    []string        // distinct; may share the validator's array (capacity capped)
	keySet  map[string]bool // index of keys once it grows
	obj     map[string]any
}

// smallSet is the size up to which lists are searched rather than indexed.
const smallSet = 8

func (c *collector) unknownAt(loc []string, allowed *nameSet, known bool, keys []string) {
	path, _, inst := c.locate(loc)
	g := c.group(path)
	if g == nil {
		obj, _ := inst.(map[string]any)
		if c.unknown == nil {
			c.unknown = make([]unknownGroup, 0, 1)
		}
		c.unknown = append(c.unknown, unknownGroup{path: path, allowed: emptyNames, obj: obj})
		g = &c.unknown[len(c.unknown)-1]
		if c.byPath != nil {
			c.byPath[path] = len(c.unknown) - 1
		} else if len(c.unknown) > smallSet {
			c.byPath = make(map[string]int, 2*len(c.unknown))
			for i, u := range c.unknown {
				c.byPath[u.path] = i
			}
		}
	}
	g.known = g.known || known
	g.allowed = g.allowed.union(allowed)
	if len(g.keys) == 0 && len(keys) <= smallSet && distinct(keys) {
		g.keys = keys[:len(keys):len(keys)]
		return
	}
	for _, k := range keys {
		g.addKey(k)
	}
}

func distinct(keys []string) bool {
	for i, k := range keys {
		if slices.Contains(keys[:i], k) {
			return false
		}
	}
	return true
}

func (c *collector) group(path string) *unknownGroup {
	if c.byPath != nil {
		if i, ok := c.byPath[path]; ok {
			return &c.unknown[i]
		}
		return nil
	}
	for i := range c.unknown {
		if c.unknown[i].path == path {
			return &c.unknown[i]
		}
	}
	return nil
}

func (g *unknownGroup) addKey(k string) {
	if g.keySet != nil {
		if !g.keySet[k] {
			g.keySet[k] = true
			g.keys = append(g.keys, k)
		}
		return
	}
	if slices.Contains(g.keys, k) {
		return
	}
	g.keys = append(g.keys, k)
	if len(g.keys) > smallSet {
		g.keySet = make(map[string]bool, 2*len(g.keys))
		for _, x := range g.keys {
			g.keySet[x] = true
		}
	}
}

// problems returns every recorded problem, unknown-key groups included,
// deduplicated and sorted.
func (c *collector) problems() []Problem {
	for i := range c.unknown {
		g := &c.unknown[i]
		c.list = append(c.list, Problem{Path: g.path, Text: g.text()})
	}
	slices.SortFunc(c.list, compareProblems)
	return slices.Compact(c.list)
}

func (g *unknownGroup) text() string {
	head, n := "unknown field at ", ""
	if len(g.keys) > 1 {
		head, n = " unknown fields at ", strconv.Itoa(len(g.keys))
	}
	allowed := g.allowed
	switch {
	case !g.known:
		return n + head + g.path
	case len(allowed.names) == 0 && g.path == "/":
		return n + head + g.path + "; this tool takes no arguments"
	case len(allowed.names) == 0:
		return n + head + g.path + "; no fields allowed"
	}
	hit := g.suggestion()
	if len(g.keys) == 1 {
		// One unknown key: the sentence depends on the path and the
		// suggestion only; keep the first one worded.
		if t := allowed.one.Load(); t != nil && t.path == g.path && t.hit == hit {
			return t.text
		}
	}
	text := n + head + g.path + "; allowed: " + allowed.list
	if hit >= 0 {
		text += allowed.did[hit]
	}
	if len(g.keys) == 1 {
		allowed.one.CompareAndSwap(nil, &groupText{path: g.path, hit: hit, text: text})
	}
	return text
}

// suggestion returns the index of the declared property one unknown key was
// probably meant to be, when exactly one unknown key is close to a declared,
// absent name, or -1.
func (g *unknownGroup) suggestion() int {
	hits, hit := 0, 0
	for _, key := range g.keys {
		if i, ok := nearest(key, g.allowed, g.obj); ok {
			hits, hit = hits+1, i
		}
	}
	if hits != 1 {
		return -1
	}
	return hit
}

// nearest returns the index of the declared name closest to key: a
// case-insensitive match or an edit distance of at most 2 (and less than the
// name's length). Names the caller already supplied are skipped; ties go to
// the first sorted name.
func nearest(key string, names *nameSet, present map[string]any) (int, bool) {
	if len(key) > 256 {
		return 0, false
	}
	var buf [64]rune
	keyRunes := appendRunes(buf[:0], key)
	keyASCII := isASCII(key)
	best, bestD := 0, 3
	for i, name := range names.names {
		// Names whose lengths differ by more than 2 runes are at distance
		// 3 or more, and cannot fold to key either.
		if d := len(keyRunes) - len(names.runes[i]); d > 2 || d < -2 {
			continue
		}
		// A name the caller supplied is never suggested; it is looked up
		// only once it would win (a present name never changes bestD).
		if strings.EqualFold(key, name) {
			if _, ok := present[name]; ok {
				continue
			}
			best, bestD = i, 0
			break // nothing later can be closer
		}
		// Only a distance below bestD changes the answer, so the
		// computation may stop there (it then reports bestD or more).
		limit := bestD - 1
		var ed int
		if keyASCII && names.ascii[i] {
			ed = editDistanceASCII(key, name, limit)
		} else {
			ed = editDistance(keyRunes, names.runes[i], limit)
		}
		if ed < len(names.runes[i]) && ed < bestD {
			if _, ok := present[name]; ok {
				continue
			}
			best, bestD = i, ed
		}
	}
	return best, bestD <= 2
}

// editDistance is the Levenshtein distance between a and b in runes, or
// limit+1 when it exceeds limit. Only the band of cells within limit of the
// diagonal is computed (the others are beyond limit), and the computation
// stops at the first row whose band is all beyond limit.
func editDistance(ra, rb []rune, limit int) int {
	var bufP, bufC [65]int
	over := limit + 1
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return over
	}
	prev, cur := bufP[:0], bufC[:0]
	if len(rb)+1 > len(bufP) {
		prev, cur = make([]int, 0, len(rb)+1), make([]int, 0, len(rb)+1)
	}
	prev, cur = prev[:len(rb)+1], cur[:len(rb)+1]
	for j := range prev {
		prev[j] = min(j, over)
	}
	for i := 1; i <= len(ra); i++ {
		lo, hi := max(1, i-limit), min(len(rb), i+limit)
		if lo == 1 {
			cur[0] = min(i, over)
		} else {
			cur[lo-1] = over
		}
		best := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost, over)
			cur[j] = v
			best = min(best, v)
		}
		if hi < len(rb) {
			cur[hi+1] = over
		}
		if best >= over {
			return over
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// editDistanceASCII is editDistance for two ASCII strings. A common prefix
// and suffix do not change the distance, and the distance is at least the
// longer length minus the characters the two have in common: both are
// checked before the computation.
func editDistanceASCII(a, b string, limit int) int {
	over := limit + 1
	if d := len(a) - len(b); d > limit || -d > limit {
		return over
	}
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	if len(b) >= 64 {
		return editDistance([]rune(a), []rune(b), limit)
	}
	var count [128]uint8
	for i := range len(a) {
		count[a[i]&0x7f]++
	}
	common := 0
	for j := range len(b) {
		if c := b[j] & 0x7f; count[c] > 0 {
			count[c]--
			common++
		}
	}
	if max(len(a), len(b))-common > limit {
		return over
	}
	var bufP, bufC [65]int
	prev, cur := bufP[:len(b)+1], bufC[:len(b)+1]
	for j := range prev {
		prev[j] = min(j, over)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-limit), min(len(b), i+limit)
		if lo == 1 {
			cur[0] = min(i, over)
		} else {
			cur[lo-1] = over
		}
		best := cur[lo-1]
		ca := a[i-1]
		for j := lo; j <= hi; j++ {
			v := prev[j-1]
			if ca != b[j-1] {
				v++
			}
			v = min(v, prev[j]+1, cur[j-1]+1, over)
			cur[j] = v
			best = min(best, v)
		}
		if hi < len(b) {
			cur[hi+1] = over
		}
		if best >= over {
			return over
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendRunes is append(buf, []rune(s)...) without the intermediate slice.
func appendRunes(buf []rune, s string) []rune {
	for _, r := range s {
		buf = append(buf, r)
	}
	return buf
}

// limitedList joins names with ", " up to about n bytes, then ", ...".
func limitedList(names []string, n int) string {
	var b strings.Builder
	for i, name := range names {
		if i > 0 && b.Len()+len(name)+2 > n {
			b.WriteString(", ...")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
	}
	return b.String()
}
