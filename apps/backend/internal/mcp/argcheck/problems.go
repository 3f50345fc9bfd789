package argcheck

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits on the rendered message.
const (
	maxShown        = 5    // problems rendered before "+N more"
	maxMessageBytes = 1024 // whole Error() text
	maxProblemBytes = 480  // one problem's text
	maxAllowedBytes = 300  // the "allowed:" list of an unknown-field problem
)

// Problem is one reason the arguments were refused. Path is a JSON pointer
// ("/" for the root) in which keys of open maps appear as "*". Text is the
// complete sentence shown to the caller; it already names Path and contains
// only schema data (declared names, keywords, bounds, enum and const values).
type Problem struct {
	Path string
	Text string
}

// Problems is the error Validate returns for invalid arguments.
type Problems struct {
	Tool string
	List []Problem
}

// Error renders "invalid arguments for <tool>: " followed by the first few
// problems in path-then-text order, joined by "; ", then "+N more" when some
// were left out. The result never exceeds 1024 bytes.
func (p *Problems) Error() string {
	list := normalize(p.List)
	prefix := "invalid arguments for " + clip(p.Tool, 128) + ": "
	if len(list) == 0 {
		return strings.TrimSuffix(prefix, ": ")
	}
	for k := min(len(list), maxShown); ; k-- {
		var b strings.Builder
		b.WriteString(prefix)
		for i := range k {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(clip(list[i].Text, maxProblemBytes))
		}
		if rest := len(list) - k; rest > 0 {
			if k > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "+%d more", rest)
		}
		if b.Len() <= maxMessageBytes || k == 0 {
			return b.String()
		}
	}
}

// normalize returns the problems deduplicated and sorted by path (array
// indices in numeric order), then text.
func normalize(in []Problem) []Problem {
	list := slices.Clone(in)
	slices.SortFunc(list, func(a, b Problem) int {
		if c := comparePaths(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Text, b.Text)
	})
	return slices.Compact(list)
}

// comparePaths orders JSON pointers segment by segment (a prefix first).
// Array indices sort before names and by value, so /a/2 comes before /a/10.
func comparePaths(a, b string) int {
	for {
		sa, ra, moreA := strings.Cut(a, "/")
		sb, rb, moreB := strings.Cut(b, "/")
		if c := compareSegments(sa, sb); c != 0 {
			return c
		}
		switch {
		case !moreA && !moreB:
			return 0
		case !moreA:
			return -1
		case !moreB:
			return 1
		}
		a, b = ra, rb
	}
}

func compareSegments(a, b string) int {
	ia, ib := isIndex(a), isIndex(b)
	switch {
	case ia && ib && len(a) != len(b):
		return cmp.Compare(len(a), len(b))
	case ia && !ib:
		return -1
	case !ia && ib:
		return 1
	}
	return strings.Compare(a, b)
}

func isIndex(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// unknownGroup gathers the unknown keys found at one object. The keys are
// caller data: they are counted and compared, never rendered.
type unknownGroup struct {
	allowed map[string]bool
	known   bool // the object's schema was found, so allowed is meaningful
	keys    map[string]bool
	obj     map[string]any
}

func (c *collector) unknownAt(loc []string, allowed []string, known bool, keys []string) {
	path, _, inst := c.locate(loc)
	if c.unknown == nil {
		c.unknown = map[string]*unknownGroup{}
	}
	g := c.unknown[path]
	if g == nil {
		obj, _ := inst.(map[string]any)
		g = &unknownGroup{allowed: map[string]bool{}, keys: map[string]bool{}, obj: obj}
		c.unknown[path] = g
	}
	g.known = g.known || known
	for _, a := range allowed {
		g.allowed[a] = true
	}
	for _, k := range keys {
		g.keys[k] = true
	}
}

// problems returns every recorded problem, unknown-key groups included,
// deduplicated and sorted.
func (c *collector) problems() []Problem {
	for path, g := range c.unknown {
		c.list = append(c.list, Problem{Path: path, Text: g.text(path)})
	}
	return normalize(c.list)
}

func (g *unknownGroup) text(path string) string {
	head := "unknown field at " + path
	if n := len(g.keys); n > 1 {
		head = fmt.Sprintf("%d unknown fields at %s", n, path)
	}
	allowed := sortedKeys(g.allowed)
	switch {
	case !g.known:
		return head
	case len(allowed) == 0 && path == "/":
		return head + "; this tool takes no arguments"
	case len(allowed) == 0:
		return head + "; no fields allowed"
	}
	return head + "; allowed: " + limitedList(allowed, maxAllowedBytes) + g.suggestion(allowed)
}

// suggestion names the declared property one unknown key was probably meant
// to be, when exactly one unknown key is close to a declared, absent name.
func (g *unknownGroup) suggestion(allowed []string) string {
	hits, hit := 0, ""
	for key := range g.keys {
		if name, ok := nearest(key, allowed, g.obj); ok {
			hits, hit = hits+1, name
		}
	}
	if hits != 1 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", hit)
}

// nearest returns the declared name closest to key: a case-insensitive match
// or an edit distance of at most 2 (and less than the name's length). Names
// the caller already supplied are skipped; ties go to the first sorted name.
func nearest(key string, names []string, present map[string]any) (string, bool) {
	if len(key) > 256 {
		return "", false
	}
	best, bestD := "", 3
	for _, name := range names {
		if _, ok := present[name]; ok {
			continue
		}
		d := 3
		if strings.EqualFold(key, name) {
			d = 0
		} else if ed := editDistance(key, name, 2); ed < utf8.RuneCountInString(name) {
			d = ed
		}
		if d < bestD {
			best, bestD = name, d
		}
	}
	return best, bestD <= 2
}

// editDistance is the Levenshtein distance between a and b in runes, or
// limit+1 when it exceeds limit.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(rb)], limit+1)
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
