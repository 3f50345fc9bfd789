package argcheck

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/schemabudget"
)

// The wording path caches schema-side results and uses shortcuts (banded
// edit distance, path comparison from the first difference, a sized message
// buffer). These tests hold them to the straightforward versions.

func TestRejected5Message(t *testing.T) {
	v := mustCompile(t, "create_task_kandev", rejectSchema)
	want := "invalid arguments for create_task_kandev: unknown field at /; allowed: agent_profile_id, base_branch, " +
		"blocked_by, executor_profile_id, external_id, local_path, parent_id, prompt, repository_id, repository_url, " +
		"start_agent, start_when_unblocked, title, workflow_id, workflow_step_id, workspace_id; /blocked_by/0: expected string; " +
		"/start_agent: expected boolean; /title: longer than 60 characters (maxLength); /workspace_id: does not match pattern ^[A-Za-z0-9_-]{1,64}$"
	for range 3 { // cold, then from the caches
		for _, args := range decodeBoth(t, rejectArgs) {
			if got := message(v.Validate(args)); got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		}
	}
}

// TestWarmAndColdAgree compares a validator whose caches are filled by
// earlier calls, from several goroutines, with a fresh one per call.
func TestWarmAndColdAgree(t *testing.T) {
	inputs := map[string][]string{
		createTaskSchema: {
			`{"title":"x","workspace_id":"w","promt":"p","zzzzzzzz":1}`,
			`{"title":"x","workspace_id":"w","repository":{"url":"u","base_brnch":"main"}}`,
			`{"title":1,"workspace_id":2,"retries":"x","priority":"x","a":1,"b":2,"promt":3,"meta":{"x":"12345678901","y":"12345678901"}}`,
			`{"title":"x","workspace_id":"w","blocks":[{"type":"image"},{"type":"text","text":1},{"kind":"x"},{"text":"t"},"s"]}`,
			`{"title":"x","workspace_id":"w","blocked_by":[0,1,2,3,4,5,6,7,8,9,10,11],"repository":{}}`,
			`{}`, `[]`,
		},
		kitchenSchema: {
			`{"rows":[{"a":1},{"toolong":"x"}],"env":{"HOME":"abcd","home":1},"kinds":{"kind":"c"}}`,
			`{"pair":["a",1,2],"tags":["a","a"],"one":1,"either":true,"card":{"number":"4"}}`,
			`{"mode":"slow","level":4,"code":"abc","ratio":0,"step":7,"big":"zz","mixed":2,"when":"x","nullable":1,"forbidden":"s"}`,
			`{"kinds":{"kind":"b","y":"x"},"labels":{},"env":{"A":"abcd","B":"abcd"},"MODE":1}`,
		},
	}
	for schema, raws := range inputs {
		warm := mustCompile(t, "warm_kandev", schema)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 20 {
					for _, raw := range raws {
						for _, args := range decodeBoth(t, raw) {
							cold := mustCompile(t, "warm_kandev", schema)
							if got, want := message(warm.Validate(args)), message(cold.Validate(args)); got != want {
								t.Errorf("%s: warm %q, cold %q", raw, got, want)
								return
							}
						}
					}
				}
			})
		}
		wg.Wait()
	}
}

// TestCachesBounded checks the caches stop at their cap on a schema with
// more locations than that, and that messages do not change past it.
func TestCachesBounded(t *testing.T) {
	var props []string
	args := map[string]any{"zz": 1.0}
	for i := range maxCached + 200 {
		name := fmt.Sprintf("p%04d", i)
		props = append(props, fmt.Sprintf(`%q:{"type":"object","properties":{"a":{"type":"string"},"next":{"$ref":"#/$defs/leaf"}},"additionalProperties":false}`, name))
		args[name] = map[string]any{"a": 1.0, "x": true, "next": map[string]any{"a": 2.0}}
	}
	schema := `{"type":"object","properties":{` + strings.Join(props, ",") + `},"additionalProperties":false,` +
		`"$defs":{"leaf":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}}}`
	lim := schemabudget.DefaultLimits()
	lim.Properties = 10_000
	v, err := CompileWith("caps_kandev", []byte(schema), Options{AssertFormat: true, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	first := message(v.Validate(args))
	for range 2 {
		if got := message(v.Validate(args)); got != first {
			t.Fatalf("got %q, want %q", got, first)
		}
	}
	var p *Problems
	if !errors.As(v.Validate(args), &p) || len(p.List) != 3*(maxCached+200)+1 {
		t.Fatalf("got %v, want every problem", p)
	}
	if n := len(*v.tree.locs.Load()); n > maxCached {
		t.Errorf("schema locations cached: got %d, want <= %d", n, maxCached)
	}
	if n := len(v.tree.loci); n > maxCached {
		t.Errorf("loci cached: got %d, want <= %d", n, maxCached)
	}
}

func refEditDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1)
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

func TestEditDistance(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabets := [][]rune{[]rune("abcde"), []rune("abcdéΩ")}
	for range 30000 {
		alpha := alphabets[r.IntN(2)]
		mk := func() []rune {
			n := r.IntN(12)
			if r.IntN(50) == 0 {
				n = 60 + r.IntN(20)
			}
			s := make([]rune, n)
			for i := range s {
				s[i] = alpha[r.IntN(len(alpha))]
			}
			return s
		}
		a, b := mk(), mk()
		if r.IntN(2) == 0 { // a few edits away
			b = append([]rune(nil), a...)
			for range r.IntN(4) {
				i := r.IntN(len(b) + 1)
				if i < len(b) && r.IntN(2) == 0 {
					b = append(b[:i], b[i+1:]...)
				} else {
					b = append(b[:i], append([]rune{alpha[r.IntN(len(alpha))]}, b[i:]...)...)
				}
			}
		}
		for limit := range 4 {
			want := refEditDistance(string(a), string(b), limit)
			if got := editDistance(a, b, limit); got != want {
				t.Fatalf("editDistance(%q, %q, %d): got %d, want %d", string(a), string(b), limit, got, want)
			}
			if isASCII(string(a)) && isASCII(string(b)) {
				if got := editDistanceASCII(string(a), string(b), limit); got != want {
					t.Fatalf("editDistanceASCII(%q, %q, %d): got %d, want %d", string(a), string(b), limit, got, want)
				}
			}
		}
	}
}

func refComparePaths(a, b string) int {
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

func TestComparePaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	segs := []string{"", "a", "ab", "b", "0", "1", "2", "10", "01", "*", "title", "tit", "x~1y"}
	mk := func() string {
		s := ""
		for range r.IntN(5) {
			s += "/" + segs[r.IntN(len(segs))]
		}
		if s == "" || r.IntN(8) == 0 {
			s = "/" + s
		}
		return s
	}
	for range 50000 {
		a, b := mk(), mk()
		if r.IntN(3) == 0 {
			b = a + mk()
		}
		if got, want := comparePaths(a, b), refComparePaths(a, b); got != want {
			t.Fatalf("comparePaths(%q, %q): got %d, want %d", a, b, got, want)
		}
	}
}

// refError renders a message by trying shorter and shorter runs of problems.
func refError(p *Problems) string {
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

func TestErrorText(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"é", "a", "/", "x", "Ω", "; ", "long"}
	mk := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 5000 {
		p := &Problems{Tool: mk(r.IntN(100))}
		for range r.IntN(120) {
			if r.IntN(5) == 0 && len(p.List) > 0 {
				p.List = append(p.List, p.List[len(p.List)-1])
				continue
			}
			path := "/" + mk(r.IntN(4))
			if r.IntN(3) == 0 {
				path = fmt.Sprintf("/%d", r.IntN(12))
			}
			p.List = append(p.List, Problem{Path: path, Text: path + ": " + mk(r.IntN(300))})
		}
		if got, want := p.Error(), refError(p); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		if !normalized(normalize(p.List)) {
			t.Fatalf("normalize(%v) is not normalized", p.List)
		}
	}
}
