package toolserver

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// compatProfiles are the reference product's tool surfaces (as its schema
// dump names them) and the profile of ours that serves the same agents.
var compatProfiles = map[string]catalog.Profile{
	"task":                 catalog.DefaultProfile(kanban.ModeTask),
	"task-title-pending":   catalog.DefaultProfile(kanban.ModeTaskTitlePending),
	"config":               catalog.DefaultProfile(kanban.ModeConfig),
	"office":               catalog.DefaultProfile(kanban.ModeOffice),
	"external":             catalog.DefaultProfile(kanban.ModeExternal),
	"task+parent-question": {Mode: kanban.ModeTask, Capabilities: []string{kanban.CapParentQuestion}},
}

// TestReferenceArgumentsAccepted is the compatibility corpus: for every
// tool of every reference surface (testdata/compat/reference_tools.json,
// the reference's own input schemas), ours lists the tool, the corpus call
// (testdata/compat/calls.json) uses every argument the reference declares,
// nested ones included, our advertised schema — compiled independently
// from tools/list — accepts it, and a real MCP call passes the wrapper.
func TestReferenceArgumentsAccepted(t *testing.T) {
	var ref map[string]map[string]map[string]any
	var calls map[string]map[string]any
	readJSON(t, "testdata/compat/reference_tools.json", &ref)
	readJSON(t, "testdata/compat/calls.json", &calls)
	c := mustCompile(t)
	modes := make([]string, 0, len(ref))
	for m := range ref {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	for _, mode := range modes {
		p, ok := compatProfiles[mode]
		if !ok {
			t.Errorf("reference surface %s: no profile of ours serves it", mode)
			continue
		}
		_, cl := clientFor(t, c, p, &recorder{})
		wire := map[string]map[string]any{}
		for _, tool := range listWire(t, cl) {
			wire[tool["name"].(string)] = tool
		}
		accepted, total := 0, 0
		for name, refSchema := range ref[mode] {
			declared := declaredPaths(refSchema, "")
			total += len(declared)
			tool, listed := wire[name]
			args, inCorpus := calls[name]
			switch {
			case !listed:
				t.Errorf("%s: %s is not listed", mode, name)
				continue
			case !inCorpus:
				t.Errorf("%s: %s has no corpus call", mode, name)
				continue
			}
			ok := true
			for _, path := range declared {
				if !present(args, strings.Split(strings.TrimPrefix(path, "/"), "/")) {
					t.Errorf("%s: %s: the corpus call does not use the reference's argument %s", mode, name, path)
					ok = false
				}
			}
			if err := independent(t, name, tool["inputSchema"]).Validate(roundTrip(t, args)); err != nil {
				t.Errorf("%s: %s: our advertised schema refuses the reference-shaped call: %v", mode, name, err)
				ok = false
			}
			if res := callRaw(t, cl, name, args); res.IsError && strings.HasPrefix(text(res), "invalid arguments for ") {
				t.Errorf("%s: %s: the wrapper refuses the reference-shaped call: %s", mode, name, text(res))
				ok = false
			}
			if ok {
				accepted += len(declared)
			}
		}
		t.Logf("%s: %d of %d reference arguments accepted, %d tools", mode, accepted, total, len(ref[mode]))
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// declaredPaths lists the argument paths a schema declares: object
// properties (/name), array items ([] after the array's name), the
// variants of oneOf/anyOf.
func declaredPaths(s map[string]any, at string) []string {
	var out []string
	if props, ok := s["properties"].(map[string]any); ok {
		for k, v := range props {
			out = append(out, at+"/"+k)
			if sub, ok := v.(map[string]any); ok {
				out = append(out, declaredPaths(sub, at+"/"+k)...)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out = append(out, declaredPaths(items, at+"[]")...)
	}
	for _, alt := range []string{"oneOf", "anyOf"} {
		vs, _ := s[alt].([]any)
		for _, v := range vs {
			if sub, ok := v.(map[string]any); ok {
				out = append(out, declaredPaths(sub, at)...)
			}
		}
	}
	sort.Strings(out)
	return slicesCompact(out)
}

func slicesCompact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// present reports whether the value has the path: each segment a key, a
// trailing "[]" meaning some element of that array has the rest.
func present(v any, path []string) bool {
	if len(path) == 0 {
		return true
	}
	key, arr := strings.CutSuffix(path[0], "[]")
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	child, ok := m[key]
	if !ok {
		return false
	}
	if !arr {
		return present(child, path[1:])
	}
	items, _ := child.([]any)
	for _, it := range items {
		if present(it, path[1:]) {
			return true
		}
	}
	return false
}
