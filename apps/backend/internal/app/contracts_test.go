package app

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// TestActionContracts pins which payload contract each action has — the
// compiled input schema of the named tool, or the catalog's declared
// payload schema — and proves that every action has exactly one, that a
// contract declares exactly the payload's fields, and that a declared
// payload shares each property it has in common with a tool of the same
// action (the same schema value: a rule written once). A change of an
// action's contract shows in the golden file's diff.
func TestActionContracts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cat, err := catalog.New()
	if err != nil {
		t.Fatal(err)
	}
	tools := contractTools(e.b.reg, cat)
	var b strings.Builder
	for _, name := range e.b.reg.Names() {
		a, _ := e.b.reg.Lookup(name)
		payload, declared := cat.Payload(name)
		tool, byTool := tools[name]
		contract := "declared payload"
		if coveredByTools(cat, name) {
			contract = "declared payload, covers its tools"
		}
		switch {
		case byTool == declared:
			t.Errorf("%s: tool contract %v, declared payload %v: want exactly one", name, byTool, declared)
		case byTool:
			contract = "schema of " + tool.Name
		default:
			if got := schemaProps(payload); !slices.Equal(got, a.Fields()) {
				t.Errorf("%s: declared payload has properties %v, the payload fields %v", name, got, a.Fields())
			}
			checkSharedProps(t, name, payload, cat)
		}
		if !e.b.reg.HasContract(name) {
			t.Errorf("%s: no contract set", name)
		}
		fmt.Fprintf(&b, "%-32s %-44s %s\n", name, contract, strings.Join(a.Fields(), ","))
	}
	path := filepath.Join("testdata", "action_contracts.golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path) //nolint:gosec // a fixed test path
	if err != nil {
		t.Fatalf("read %s (run with -update): %v", path, err)
	}
	if b.String() != string(want) {
		t.Errorf("action contracts changed (run go test ./internal/app -run TestActionContracts -update):\ngot:\n%swant:\n%s", b.String(), want)
	}
}

// schemaProps lists an object schema's property names (of every oneOf
// branch), sorted.
func schemaProps(s catalog.S) []string {
	names := map[string]bool{}
	collect := func(s catalog.S) {
		props, _ := s["properties"].(catalog.P)
		for n := range props {
			names[n] = true
		}
	}
	collect(s)
	branches, _ := s["oneOf"].([]any)
	for _, br := range branches {
		collect(br.(catalog.S))
	}
	return slices.Sorted(maps.Keys(names))
}

// checkSharedProps requires each property a declared payload has in
// common with a tool of the same action to be that tool's schema, equal
// in every keyword.
func checkSharedProps(t *testing.T, name kanban.Action, payload catalog.S, cat *catalog.Catalog) {
	t.Helper()
	props, _ := payload["properties"].(catalog.P)
	for _, tool := range cat.All() {
		if tool.Action != name {
			continue
		}
		toolProps, _ := tool.InputSchema()["properties"].(catalog.P)
		for n, ps := range props {
			if ts, ok := toolProps[n]; ok && !reflect.DeepEqual(ps, ts) {
				t.Errorf("%s.%s: declared %v, tool %s declares %v: one rule, two values", name, n, ps, tool.Name, ts)
			}
		}
	}
}

// TestNarrows: a tool schema covers a declared payload only when every
// value it accepts is one the payload accepts.
func TestNarrows(t *testing.T) {
	id := catalog.ID("An id.")
	payload := catalog.Obj("", catalog.P{"task_id": id, "workspace_id": id}, "task_id")
	for _, c := range []struct {
		name string
		tool catalog.S
		want bool
	}{
		{"subset, requires more", catalog.Obj("", catalog.P{"task_id": catalog.ID("An id.")}, "task_id"), true},
		{"misses a required field", catalog.Obj("", catalog.P{"workspace_id": catalog.ID("An id.")}), false},
		{"property the payload lacks", catalog.Obj("", catalog.P{"task_id": id, "x": id}, "task_id"), false},
		{"different bound", catalog.Obj("", catalog.P{"task_id": catalog.Str("An id.").Len(1, 5)}, "task_id"), false},
		{"open tool", catalog.S{"type": "object", "properties": catalog.P{"task_id": id}, "required": []string{"task_id"}}, false},
	} {
		if got := narrows(c.tool, payload); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if narrows(catalog.Obj("", catalog.P{"task_id": id}, "task_id"), catalog.S{"type": "object", "oneOf": []any{payload}}) {
		t.Error("a payload with oneOf: got covered, want not (narrows does not follow oneOf)")
	}
}
