package schemabudget_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/escape"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
	"github.com/kandev/kandev/apps/backend/internal/schemabudget"
)

// TestMain runs the deep-chain child when asked to (see TestDeepChainSubprocess).
func TestMain(m *testing.M) {
	if os.Getenv("SCHEMABUDGET_CHILD") == "deep-chain" {
		deepChainChild()
		return
	}
	os.Exit(m.Run())
}

// workPerByte bounds Check's steps per schema byte: the estimate is linear.
const workPerByte = 4

func TestHostileCases(t *testing.T) {
	t.Parallel()
	lim := schemabudget.DefaultLimits()
	for _, c := range fixture.Hostile() {
		if c.Refused == "name" {
			continue // a tool-name case, decided by the gateway
		}
		est, ref := schemabudget.Check([]byte(c.Schema), lim)
		got := ""
		if ref != nil {
			got = string(ref.Limit)
		}
		want := c.Refused
		if want == "compile" {
			want = "" // within budget; the compiler refuses it
		}
		if got != want {
			t.Errorf("%s: got refusal %q (%v), want %q", c.Name, got, ref, want)
		}
		if est.Work > workPerByte*len(c.Schema)+64 {
			t.Errorf("%s: %d steps for %d bytes, want at most %d per byte", escape.Excerpt(c.Name, 40), est.Work, len(c.Schema), workPerByte)
		}
		if ref != nil && (escape.Needed(ref.Error()) || len(ref.At) > 120) {
			t.Errorf("%s: refusal %q is not escaped and bounded", c.Name, ref.Error())
		}
	}
}

// TestServedCasesCompile checks that the cases within budget compile with
// the secure compiler, and that the ones the estimate refuses never reach
// it (CompileWith returns the refusal itself).
func TestServedCasesCompile(t *testing.T) {
	t.Parallel()
	for _, c := range fixture.Hostile() {
		if c.Refused == "name" || len(c.Schema) > 2<<20 {
			continue
		}
		_, err := argcheck.CompileWith("t", []byte(c.Schema), argcheck.Options{})
		var ref *schemabudget.Refusal
		switch c.Refused {
		case "":
			if err != nil {
				t.Errorf("%s: got %v, want it compiled", c.Name, err)
			}
		case "compile":
			if err == nil || errors.As(err, &ref) {
				t.Errorf("%s: got %v, want a compiler error", c.Name, err)
			}
		default:
			if !errors.As(err, &ref) || string(ref.Limit) != c.Refused {
				t.Errorf("%s: got %v, want the %s refusal", c.Name, err, c.Refused)
			}
		}
	}
}

func TestDialectRules(t *testing.T) {
	t.Parallel()
	lim := schemabudget.DefaultLimits()
	lim.Visits = 10
	cases := []struct {
		name, schema string
		want         schemabudget.Limit
	}{
		// Eleven subschemas beside a $ref: counted from 2019-09 on, hidden in draft-07.
		{"2020 siblings count", siblings(""), schemabudget.LimitVisits},
		{"2019 siblings count", siblings("https://json-schema.org/draft/2019-09/schema"), schemabudget.LimitVisits},
		{"draft-07 siblings hidden", siblings("http://json-schema.org/draft-07/schema#"), ""},
		// ...but draft-07 still compiles contains/propertyNames/if beside $ref.
		{"draft-07 if beside ref", `{"$schema":"http://json-schema.org/draft-07/schema","$ref":"#/definitions/a","if":` + wide(11) + `,"definitions":{"a":{}}}`, schemabudget.LimitVisits},
		{"then skipped when if is false", `{"if":false,"then":` + wide(11) + `}`, ""},
		{"else skipped when if is true", `{"if":true,"else":` + wide(11) + `}`, ""},
		{"unused defs are not evaluated", `{"$defs":{"x":` + wide(11) + `}}`, ""},
		{"pointer escapes", `{"$ref":"#/$defs/a~1b~0c","$defs":{"a/b~c":` + wide(11) + `}}`, schemabudget.LimitVisits},
		{"percent-encoded pointer", `{"$ref":"#/$defs/%61%62","$defs":{"ab":` + wide(11) + `}}`, schemabudget.LimitVisits},
		{"bad pointer escape", `{"$ref":"#/$defs/a~2","$defs":{"a~2":{}}}`, schemabudget.LimitRefMissing},
		{"anchor", `{"$ref":"#big","$defs":{"x":{"$anchor":"big","anyOf":[{},{},{},{},{},{},{},{},{},{},{}]}}}`, schemabudget.LimitVisits},
		{"duplicate anchor", `{"$defs":{"x":{"$anchor":"a"},"y":{"$anchor":"a"}}}`, schemabudget.LimitRefMissing},
		{"embedded resource", `{"$defs":{"x":{"$id":"https://example.com/x"}}}`, schemabudget.LimitResource},
		{"relative ref", `{"$ref":"other.json#/a"}`, schemabudget.LimitRefRemote},
		{"ref into data", `{"$ref":"#/enum/0","enum":["x"]}`, schemabudget.LimitRefMissing},
		{"self ref", `{"$ref":"#"}`, schemabudget.LimitRefCycle},
		{"boolean root", `true`, schemabudget.LimitRoot},
		{"duplicate key", `{"type":"object","type":"string"}`, schemabudget.LimitSyntax},
		{"trailing data", `{} {}`, schemabudget.LimitSyntax},
		{"invalid utf-8", "{\"description\":\"\xff\"}", schemabudget.LimitSyntax},
		{"long number", `{"maximum":` + strings.Repeat("1", 65) + `}`, schemabudget.LimitNumber},
		{"big exponent", `{"maximum":1e401}`, schemabudget.LimitNumber},
		{"fine exponent", `{"maximum":1e400}`, ""},
		{"enum count", `{"enum":[` + strings.TrimSuffix(strings.Repeat("1,", 5001), ",") + `]}`, schemabudget.LimitEnum},
		{"schema below root", `{"properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`, schemabudget.LimitDialect},
	}
	for _, c := range cases {
		_, ref := schemabudget.Check([]byte(c.schema), lim)
		var got schemabudget.Limit
		if ref != nil {
			got = ref.Limit
		}
		if got != c.want {
			t.Errorf("%s: got %q (%v), want %q", c.name, got, ref, c.want)
		}
	}
}

// wide is an anyOf of n empty schemas (n+1 subschemas).
func wide(n int) string {
	return `{"anyOf":[` + strings.TrimSuffix(strings.Repeat("{},", n), ",") + `]}`
}

func siblings(dialect string) string {
	head := `{`
	if dialect != "" {
		head += fmt.Sprintf(`"$schema":%q,`, dialect)
	}
	return head + `"$ref":"#/$defs/a","anyOf":[{},{},{},{},{},{},{},{},{},{},{}],"definitions":{},"$defs":{"a":{}}}`
}

func TestEstimateCounts(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"},"b":{"$ref":"#/$defs/s"}},"required":["a"],"$defs":{"s":{"type":"string","enum":["x","y"]}}}`
	est, ref := schemabudget.Check([]byte(schema), schemabudget.DefaultLimits())
	if ref != nil {
		t.Fatal(ref)
	}
	// root, a, s (via a), b, s (via b)
	if est.Visits != 5 || est.RefHops != 1 || est.Properties != 3 || est.Enum != 2 || est.Dialect != "2020-12" || est.Depth != 4 || est.Schemas != 4 {
		t.Fatalf("got %+v, want visits 5, hops 1, properties 3, enum 2, 2020-12, depth 4, schemas 4", est)
	}
}

func TestMemoryBounded(t *testing.T) {
	lim := schemabudget.DefaultLimits()
	for _, c := range fixture.Hostile() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _ = schemabudget.Check([]byte(c.Schema), lim)
		runtime.ReadMemStats(&after)
		// Refused by size before parsing, or parsed into a tree of at most
		// ~160 bytes per schema byte.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(160*min(len(c.Schema), lim.Bytes)+(1<<20)) {
			t.Errorf("%s: allocated %d bytes for a %d-byte schema", escape.Excerpt(c.Name, 40), alloc, len(c.Schema))
		}
	}
}

// TestDeepChainSubprocess proves the 10,000-link $ref chain (and a 100,000-
// link one) cannot exhaust the stack: a child process with a 256 KiB stack
// limit estimates and compiles them and must exit normally.
func TestDeepChainSubprocess(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SCHEMABUDGET_CHILD=deep-chain")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "deep-chain ok") {
		t.Fatalf("child: %v: %s", err, out)
	}
}

func deepChainChild() {
	debug.SetMaxStack(256 << 10)
	lim := schemabudget.DefaultLimits()
	for _, c := range fixture.Hostile() {
		if c.Name != "ref_chain_10000" {
			continue
		}
		for _, schema := range []string{c.Schema, fixture.RefChain(100_000)} {
			lim.Bytes = len(schema)
			if _, ref := schemabudget.Check([]byte(schema), lim); ref == nil || ref.Limit != schemabudget.LimitRefHops {
				fmt.Println("deep-chain: got", ref)
				os.Exit(1)
			}
			if _, err := argcheck.CompileWith("chain", []byte(schema), argcheck.Options{Limits: lim}); err == nil {
				fmt.Println("deep-chain: compiled")
				os.Exit(1)
			}
		}
	}
	fmt.Println("deep-chain ok")
}

func FuzzCheck(f *testing.F) {
	for _, c := range fixture.Hostile() {
		if len(c.Schema) < 4096 {
			f.Add([]byte(c.Schema))
		}
	}
	f.Add([]byte(`{"$ref":"#/$defs/a","$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{}}}`))
	lim := schemabudget.DefaultLimits()
	lim.Visits, lim.RefHops = 200, 8
	f.Fuzz(func(t *testing.T, schema []byte) {
		est, ref := schemabudget.Check(schema, lim)
		if est.Work > workPerByte*len(schema)+64 {
			t.Fatalf("%d steps for %d bytes", est.Work, len(schema))
		}
		if ref != nil {
			if escape.Needed(ref.Error()) {
				t.Fatalf("refusal not escaped: %q", ref.Error())
			}
			return
		}
		if est.Visits > lim.Visits || est.RefHops > lim.RefHops {
			t.Fatalf("accepted over budget: %+v", est)
		}
		// Whatever passes must be safe to hand to the compiler.
		_, _ = argcheck.CompileWith("fuzz", schema, argcheck.Options{Limits: lim})
	})
}
