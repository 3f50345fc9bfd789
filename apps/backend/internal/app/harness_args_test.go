package app

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// argTool is one tool with arguments that pass its schema (ids need not
// exist), its required properties and the mode whose server lists it
// (ModeExternal: the operator's /mcp endpoint).
type argTool struct {
	name     string
	mode     kanban.Mode
	base     string
	required []string
}

// argCase is one refused call in a mode: want is the exact tool error
// text, or with a leading "~" a prefix of it.
type argCase struct {
	name, tool string
	mode       kanban.Mode
	args, want string
}

// genericArgCases derives, for every tool, an unknown root key, each
// missing required property and each property with the wrong type.
func genericArgCases(t *testing.T, tools []argTool) []argCase {
	var cases []argCase
	for _, at := range tools {
		var base map[string]any
		if err := json.Unmarshal([]byte(at.base), &base); err != nil {
			t.Fatalf("%s base: %v", at.name, err)
		}
		with := func(k string, v any) string {
			m := maps.Clone(base)
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
			b, _ := json.Marshal(m)
			return string(b)
		}
		refused := func(name, args, want string) {
			cases = append(cases, argCase{name, at.name, at.mode, args, want})
		}
		prefix := "invalid arguments for " + at.name + ": "
		if len(base) == 0 {
			refused("unknown root key", with("zz_secret_key", 1), prefix+"unknown field at /; this tool takes no arguments")
		} else {
			refused("unknown root key", with("zz_secret_key", 1), "~"+prefix+"unknown field at /; allowed: ")
		}
		for _, r := range at.required {
			refused("missing "+r, with(r, nil), fmt.Sprintf("%s/ is missing required %q", prefix, r))
		}
		for _, k := range slices.Sorted(maps.Keys(base)) {
			wrong, typ := wrongType(base[k])
			refused("wrong type "+k, with(k, wrong), prefix+"/"+k+": expected "+typ)
		}
	}
	return cases
}

// wrongType returns a value of another JSON type than v and the type name
// the error must expect.
func wrongType(v any) (wrong any, typ string) {
	switch v.(type) {
	case string:
		return 7, "string"
	case bool:
		return "text", "boolean"
	case float64:
		return "text", "integer"
	case map[string]any:
		return "text", "object"
	case []any:
		return "text", "array"
	}
	return "text", ""
}

// runRefusedArgs makes every call through the client of its mode and
// checks the exact error, that the unknown key is not echoed and that the
// database did not change.
func runRefusedArgs(t *testing.T, e *env, clients map[kanban.Mode]*client.Client, cases []argCase) {
	t.Helper()
	g := e.guardWrites()
	defer g.finish("refused arguments")
	for _, tc := range cases {
		r := e.call(clients[tc.mode], tc.tool, tc.args)
		got := text(r)
		if !r.IsError {
			t.Errorf("%s %s: call succeeded (%s), want refused", tc.tool, tc.name, got)
			continue
		}
		if p, ok := strings.CutPrefix(tc.want, "~"); ok {
			if !strings.HasPrefix(got, p) {
				t.Errorf("%s %s: got %q, want prefix %q", tc.tool, tc.name, got, p)
			}
		} else if got != tc.want {
			t.Errorf("%s %s:\n got %q\nwant %q", tc.tool, tc.name, got, tc.want)
		}
		if strings.Contains(got, "zz_secret_key") {
			t.Errorf("%s %s: error echoes the unknown key: %q", tc.tool, tc.name, got)
		}
		g.unchanged(tc.tool + " " + tc.name)
	}
}
