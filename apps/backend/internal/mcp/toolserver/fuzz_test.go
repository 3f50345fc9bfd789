package toolserver

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// fuzzCanary marks caller-chosen keys (names no catalog schema declares) and,
// optionally, string values; no tool error may contain it.
const fuzzCanary = "ZQXcanary"

// FuzzCheckJSON runs the wrapper's whole argument step, for every tool of
// the real catalog, on arbitrary arguments: the refusal text is at most
// 1 KiB, names the tool, is deterministic and never echoes a caller key or
// value.
func FuzzCheckJSON(f *testing.F) {
	c, err := Compile()
	if err != nil {
		f.Fatal(err)
	}
	tools := make([]string, 0, len(c.entries))
	names := map[string]bool{}
	for name, e := range c.entries {
		tools = append(tools, name)
		collectProps(map[string]any(e.def.InputSchema()), names)
	}
	sort.Strings(tools)
	for i, s := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"title":"t","prompt":"p","description":"d"}`,
		`{"limit":1e1000001}`, `{"limit":201,"cursor":"","zzz":1}`, `{"workspace_id":["x"]}`,
		`{"events":{"on_enter":[{"type":"x","config":{"a":1}}],"bogus":[]}}`,
		`{"servers":{"k":{"command":"c","envv":{}}}}`, `{"questions":[{"question":"q","options":[]}]}`,
	} {
		f.Add(uint16(i*7), []byte(s), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, which uint16, raw []byte, markValues bool) {
		tool := tools[int(which)%len(tools)]
		raw = markArgs(raw, names, markValues)
		err := c.CheckJSON(tool, raw)
		if err == nil {
			return
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "invalid arguments for "+tool+": ") {
			t.Fatalf("got %q, want the tool's invalid-arguments message", msg)
		}
		if strings.Contains(msg, fuzzCanary) {
			t.Fatalf("got %q, want no caller keys or values", msg)
		}
		if len(msg) > 1024 {
			t.Fatalf("got %d bytes, want <= 1024", len(msg))
		}
		if again := c.CheckJSON(tool, raw); again == nil || again.Error() != msg {
			t.Fatalf("got %q then %v, want the same message", msg, again)
		}
	})
}

func collectProps(v any, names map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for k := range props {
				names[k] = true
			}
		}
		if props, ok := x["properties"].(catalog.S); ok {
			for k := range props {
				names[k] = true
			}
		}
		for _, c := range x {
			collectProps(c, names)
		}
	case catalog.S:
		collectProps(map[string]any(x), names)
	case []any:
		for _, c := range x {
			collectProps(c, names)
		}
	case []catalog.S:
		for _, c := range x {
			collectProps(map[string]any(c), names)
		}
	}
}

func markArgs(raw []byte, names map[string]bool, markValues bool) []byte {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var tree any
	if dec.Decode(&tree) != nil {
		return raw
	}
	b, err := json.Marshal(markTree(tree, names, markValues))
	if err != nil {
		return raw
	}
	return b
}

func markTree(v any, names map[string]bool, markValues bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			if !names[k] {
				k += fuzzCanary
			}
			out[k] = markTree(c, names, markValues)
		}
		return out
	case []any:
		for i, c := range x {
			x[i] = markTree(c, names, markValues)
		}
		return x
	case string:
		if markValues {
			return x + fuzzCanary
		}
	}
	return v
}
