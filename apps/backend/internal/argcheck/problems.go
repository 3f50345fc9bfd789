package argcheck

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/escape"
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
	// sorted is List as Validate returned it, already sorted and
	// deduplicated; a List replaced or resliced since is normalised again
	// when rendered (one changed in place must be kept sorted by whoever
	// changes it).
	sorted []Problem
	// plain: every text is known printable (see Validator.plain).
	plain bool
}

// isSorted reports whether List is still the sorted list Validate made.
func (p *Problems) isSorted() bool {
	return len(p.List) > 0 && len(p.sorted) == len(p.List) && &p.sorted[0] == &p.List[0]
}

// Error renders "invalid arguments for <tool>: " followed by the first few
// problems in path-then-text order, joined by "; ", then "+N more" when some
// were left out. Characters that are not printable (declared names of a
// schema Kandev did not write may hold any) are escaped. The result never
// exceeds 1024 bytes.
func (p *Problems) Error() string {
	s := p.render()
	if !p.plain && escape.Needed(s) {
		return escape.Excerpt(s, maxMessageBytes)
	}
	return s
}

func (p *Problems) render() string {
	list := p.List
	if !p.isSorted() && !normalized(list) {
		list = normalize(list)
	}
	const head = "invalid arguments for "
	tool := clip(p.Tool, 128)
	if len(list) == 0 {
		return head + tool
	}
	// The longest run of problems, at most maxShown, that fits the budget
	// (or none at all).
	prefix := len(head) + len(tool) + len(": ")
	k := min(len(list), maxShown)
	size := 0
	for ; ; k-- {
		size = prefix
		for i := range k {
			if i > 0 {
				size += len("; ")
			}
			size += clipLen(list[i].Text, maxProblemBytes)
		}
		if rest := len(list) - k; rest > 0 {
			if k > 0 {
				size += len("; ")
			}
			size += len("+ more") + decimalLen(rest)
		}
		if size <= maxMessageBytes || k == 0 {
			break
		}
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(head)
	b.WriteString(tool)
	b.WriteString(": ")
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
		b.WriteByte('+')
		b.WriteString(strconv.Itoa(rest))
		b.WriteString(" more")
	}
	return b.String()
}

func decimalLen(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// normalize returns the problems deduplicated and sorted by path (array
// indices in numeric order), then text.
func normalize(in []Problem) []Problem {
	list := slices.Clone(in)
	slices.SortFunc(list, compareProblems)
	return slices.Compact(list)
}

// normalized reports whether list is already sorted and free of duplicates,
// as normalize returns it.
func normalized(list []Problem) bool {
	for i := 1; i < len(list); i++ {
		if compareProblems(list[i-1], list[i]) >= 0 {
			return false
		}
	}
	return true
}

func compareProblems(a, b Problem) int {
	if c := comparePaths(a.Path, b.Path); c != 0 {
		return c
	}
	return strings.Compare(a.Text, b.Text)
}

// comparePaths orders JSON pointers segment by segment (a prefix first).
// Array indices sort before names and by value, so /a/2 comes before /a/10.
func comparePaths(a, b string) int {
	if a == b {
		return 0
	}
	// Segments before the one holding the first difference are equal:
	// start at that segment.
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	if s := strings.LastIndexByte(a[:p], '/'); s >= 0 {
		a, b = a[s+1:], b[s+1:]
	}
	for {
		sa, ra, moreA := cutSlash(a)
		sb, rb, moreB := cutSlash(b)
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

// cutSlash is strings.Cut(s, "/").
func cutSlash(s string) (before, after string, found bool) {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
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
	return s[:clipCut(s, n)] + "..."
}

// clipLen is len(clip(s, n)).
func clipLen(s string, n int) int {
	if len(s) <= n {
		return len(s)
	}
	return clipCut(s, n) + len("...")
}

func clipCut(s string, n int) int {
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return cut
}
