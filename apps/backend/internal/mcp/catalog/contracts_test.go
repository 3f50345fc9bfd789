package catalog

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// TestActionContracts pins, for every declared action, the tools declared
// from it — the one that serves its contract unchanged (whose name its
// refusals carry), those that narrow it, those that adapt it — and its
// payload's fields. A change shows in the golden file's diff.
func TestActionContracts(t *testing.T) {
	cat, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range action.Contracts() {
		var served, narrowed, adapted []string
		for _, tool := range cat.All() {
			switch {
			case tool.Action != c.Name():
			case !tool.Forwards():
				adapted = append(adapted, tool.Name)
			case len(tool.Drop)+len(tool.Require) == 0:
				served = append(served, tool.Name)
			default:
				narrowed = append(narrowed, tool.Name)
			}
		}
		if c.Tool() != "" && !slices.Equal(served, []string{c.Tool()}) {
			t.Errorf("%s: served unchanged by %v, want exactly its contract's tool %s", c.Name(), served, c.Tool())
		}
		var tools []string
		for _, part := range []struct {
			label string
			names []string
		}{{"tool", served}, {"narrowed by", narrowed}, {"adapted by", adapted}} {
			if len(part.names) > 0 {
				tools = append(tools, part.label+" "+strings.Join(part.names, ","))
			}
		}
		if len(tools) == 0 {
			tools = []string{"no tool"}
		}
		fmt.Fprintf(&b, "%-32s %-6s %-60s %s\n", c.Name(), c.Effect(), strings.Join(tools, "; "), strings.Join(c.Fields(), ","))
	}
	path := filepath.Join("testdata", "action_contracts.golden")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path) //nolint:gosec // a fixed test path
	if err != nil {
		t.Fatalf("read %s (run with -update): %v", path, err)
	}
	if b.String() != string(want) {
		t.Errorf("action contracts changed (run go test ./internal/mcp/catalog -run TestActionContracts -update):\ngot:\n%swant:\n%s", b.String(), want)
	}
}

// TestToolHintsMatchEffects checks every tool's readOnlyHint against the
// effect its action declares: a read-only tool serves a Reads action and
// a tool that may change something a Writes one, so the declared effect
// (what the audit log and the write rate limit go by) and the hints
// clients see cannot disagree.
func TestToolHintsMatchEffects(t *testing.T) {
	cat, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range cat.All() {
		c := action.ContractOf(tool.Action)
		if c == nil {
			continue
		}
		if got, want := tool.Hints.ReadOnly, !c.Writes(); got != want {
			t.Errorf("%s: readOnlyHint %v, but its action %s declares %s", tool.Name, got, c.Name(), c.Effect())
		}
	}
}

// TestForwardingToolsNarrowTheirContract checks, independently of how
// tools are derived, what lets a forwarding tool's checked arguments reach
// its action unchecked (action.Checked): its input is a closed object
// whose every property is the contract's very schema, requiring at least
// what the contract requires, and constraining nothing else — so every
// argument set it accepts is a payload the contract accepts.
func TestForwardingToolsNarrowTheirContract(t *testing.T) {
	cat, err := New()
	if err != nil {
		t.Fatal(err)
	}
	forwarding := 0
	for _, tool := range cat.All() {
		if !tool.Forwards() {
			continue
		}
		forwarding++
		contract := action.ContractOf(tool.Action).Schema()
		if why := narrowing(tool.InputSchema(), contract); why != "" {
			t.Errorf("%s forwards to %s: its input does not narrow the contract: %s", tool.Name, tool.Action, why)
		}
	}
	if forwarding == 0 {
		t.Fatal("no forwarding tool")
	}
}

// narrowing says why object schema tool may accept a value object schema
// contract refuses ("" when it cannot).
func narrowing(tool, contract S) string {
	for _, s := range []S{tool, contract} {
		for k := range s {
			switch k {
			case "type", "properties", "additionalProperties", "required", "description":
			default:
				return "keyword " + k + " is not followed"
			}
		}
		if s["type"] != "object" || s["additionalProperties"] != false {
			return "not a closed object"
		}
	}
	cp, _ := contract["properties"].(P)
	tp, _ := tool["properties"].(P)
	for n, ts := range tp {
		if cs, ok := cp[n]; !ok || !reflect.DeepEqual(cs, ts) {
			return "property " + n + " is not the contract's"
		}
	}
	creq, _ := contract["required"].([]string)
	treq, _ := tool["required"].([]string)
	for _, r := range creq {
		if !slices.Contains(treq, r) {
			return "the contract requires " + r
		}
	}
	return ""
}

// TestNarrowingRefuses: the check above refuses what it cannot follow.
func TestNarrowingRefuses(t *testing.T) {
	id := Str("An id.").Pattern(`^[a-z]+$`)
	contract := S{"type": "object", "properties": P{"task_id": id, "workspace_id": id}, "additionalProperties": false,
		"required": []string{"task_id"}}
	for _, c := range []struct {
		name string
		tool S
		want string
	}{
		{"subset, requires more", S{"type": "object", "properties": P{"task_id": Str("An id.").Pattern(`^[a-z]+$`)},
			"additionalProperties": false, "required": []string{"task_id"}}, ""},
		{"misses a required field", S{"type": "object", "properties": P{"workspace_id": id}, "additionalProperties": false}, "requires task_id"},
		{"property the contract lacks", S{"type": "object", "properties": P{"task_id": id, "x": id}, "additionalProperties": false,
			"required": []string{"task_id"}}, "property x"},
		{"different bound", S{"type": "object", "properties": P{"task_id": Str("An id.").Len(1, 5)}, "additionalProperties": false,
			"required": []string{"task_id"}}, "property task_id"},
		{"open tool", S{"type": "object", "properties": P{"task_id": id}, "required": []string{"task_id"}}, "closed"},
		{"oneOf", S{"type": "object", "oneOf": []any{contract}}, "oneOf"},
	} {
		if got := narrowing(c.tool, contract); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
