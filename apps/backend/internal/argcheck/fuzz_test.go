package argcheck

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// marker is appended to every fuzz-supplied key that is not a declared
// property name (and, optionally, to every string value). No schema used
// here contains it, so finding it in a message means caller data leaked.
const marker = "Ω"

func FuzzValidate(f *testing.F) {
	seeds := []string{
		`{}`, `null`, `[]`, `"x"`, `1e1000001`,
		`{"title":"Fix bug","workspace_id":"w1","retries":3,"priority":"high"}`,
		`{"title":"x","workspace_id":"w","promt":"p","zzzz":1}`,
		`{"title":"x","workspace_id":"w","repository":{"url":"u","base_brnch":"main"}}`,
		`{"title":"x","workspace_id":"w","meta":{"Bad-Key":"01234567890","ok":"v"}}`,
		`{"title":"x","workspace_id":"w","retries":1e1000001}`,
		`{"title":"x","workspace_id":"w","blocks":[{"type":"image"},{"type":"text","text":1},{"kind":"x"}]}`,
		`{"rows":[{"a":1},{"toolong":"x"}],"env":{"HOME":"abcd","home":1},"kinds":{"kind":"c"}}`,
		`{"pair":["a",1,2],"tags":["a","a"],"one":1,"either":true,"card":{"number":"4"}}`,
	}
	for i, s := range seeds {
		f.Add(s, i%2 == 0)
	}
	validators := []*Validator{
		mustCompile(f, "create_task_kandev", createTaskSchema),
		mustCompile(f, "kitchen_kandev", kitchenSchema),
		mustCompile(f, "list_workspaces_kandev", noParamsSchema),
	}
	names := map[string]bool{}
	for _, schema := range []string{createTaskSchema, kitchenSchema} {
		var doc any
		if err := json.Unmarshal([]byte(schema), &doc); err != nil {
			f.Fatal(err)
		}
		collectPropertyNames(doc, names)
	}
	f.Fuzz(func(t *testing.T, raw string, markValues bool) {
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var args any
		if dec.Decode(&args) != nil {
			return
		}
		args = markCallerData(args, names, markValues)
		for _, v := range validators {
			err := v.Validate(args)
			if err == nil {
				continue
			}
			var p *Problems
			if !errors.As(err, &p) {
				t.Fatalf("got error type %T, want *Problems", err)
			}
			msg := err.Error()
			if strings.Contains(msg, marker) {
				t.Fatalf("got %q, want no caller keys or values", msg)
			}
			if len(msg) > maxMessageBytes {
				t.Fatalf("got %d bytes, want <= %d", len(msg), maxMessageBytes)
			}
			if again := message(v.Validate(args)); again != msg {
				t.Fatalf("got %q then %q, want the same message", msg, again)
			}
		}
	})
}

func collectPropertyNames(v any, names map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for k := range props {
				names[k] = true
			}
		}
		for _, c := range x {
			collectPropertyNames(c, names)
		}
	case []any:
		for _, c := range x {
			collectPropertyNames(c, names)
		}
	}
}

func markCallerData(v any, names map[string]bool, markValues bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			if !names[k] {
				k += marker
			}
			out[k] = markCallerData(c, names, markValues)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = markCallerData(c, names, markValues)
		}
		return out
	case string:
		if markValues {
			return x + marker
		}
	}
	return v
}
