package toolserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestAdvertisedIsEnforced compiles every tool's input schema exactly as
// tools/list serves it, with an independent compiler, and checks that the
// server accepts and rejects a generated corpus exactly as that schema
// does. A rejected call must never reach the backend. Together this proves
// every tool of every mode goes through the validating wrapper.
func TestAdvertisedIsEnforced(t *testing.T) {
	c := mustCompile(t)
	for m, prof := range goldenProfiles() { // with the forge-gated tools
		rec := &recorder{}
		_, cl := clientFor(t, c, prof, rec)
		for _, tool := range listWire(t, cl) {
			name := tool["name"].(string)
			schema := independent(t, name, tool["inputSchema"])
			in := tool["inputSchema"].(map[string]any)
			for _, cs := range corpus(in) {
				want := schema.Validate(roundTrip(t, cs.args)) == nil
				rec.calls = nil
				res := callRaw(t, cl, name, cs.args)
				rejected := res.IsError && strings.HasPrefix(text(res), "invalid arguments for "+name+": ")
				if rejected == want {
					t.Errorf("%s/%s %s: server accepted=%t, advertised schema accepts=%t (%s)", m, name, cs.name, !rejected, want, text(res))
				}
				if !rejected && strings.HasPrefix(text(res), "internal error") {
					t.Errorf("%s/%s %s: valid call failed inside the server: %s", m, name, cs.name, text(res))
				}
				if rejected && len(rec.calls) > 0 {
					t.Errorf("%s/%s %s: rejected call reached the backend: %v", m, name, cs.name, rec.calls)
				}
				if cs.mustReject && want {
					t.Errorf("%s/%s %s: the advertised schema accepts a case that must be rejected", m, name, cs.name)
				}
			}
		}
	}
}

func independent(t *testing.T, name string, schema any) *jsonschema.Schema {
	t.Helper()
	comp := jsonschema.NewCompiler()
	comp.UseLoader(jsonschema.SchemeURLLoader{})
	comp.AssertFormat() // the advertised formats are enforced
	url := "mem:///" + name + ".json"
	if err := comp.AddResource(url, roundTrip(t, schema)); err != nil {
		t.Fatalf("%s: add schema: %v", name, err)
	}
	s, err := comp.Compile(url)
	if err != nil {
		t.Fatalf("%s: advertised schema does not compile: %v", name, err)
	}
	return s
}

// roundTrip re-decodes v the way the validator sees JSON (numbers exact).
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func callRaw(t *testing.T, cl *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := cl.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

type testCase struct {
	name       string
	args       map[string]any
	mustReject bool
}

// corpus generates cases from a schema: a minimal and a full example, an
// unknown root key, an unknown key in each nested fixed-shape object, a
// wrong type for each property and each declared bound crossed by one.
func corpus(s map[string]any) []testCase {
	minimal := example(s, false).(map[string]any)
	full := example(s, true).(map[string]any)
	cases := []testCase{{name: "minimal", args: minimal}, {name: "full", args: full}}
	cases = append(cases, testCase{name: "unknown root key", args: with(full, "zz_unknown_field", 1), mustReject: true})
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := props[n].(map[string]any)
		cases = append(cases, testCase{name: "wrong type " + n, args: with(full, n, wrongType(p)), mustReject: true})
		if nested := nestedObject(p); nested != nil {
			cases = append(cases, testCase{name: "unknown nested key " + n, args: with(full, n, nested), mustReject: true})
		}
		for _, b := range overBounds(p) {
			cases = append(cases, testCase{name: fmt.Sprintf("bound %s %s", n, b.kw), args: with(full, n, b.v), mustReject: true})
		}
	}
	return cases
}

func with(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = v
	return out
}

// example builds a valid instance: required properties only, or all.
func example(s map[string]any, all bool) any {
	if v, ok := s["const"]; ok {
		return v
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if bs, ok := s["oneOf"].([]any); ok && len(bs) > 0 {
		return example(bs[0].(map[string]any), all)
	}
	switch s["type"] {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req := map[string]bool{}
		if r, ok := s["required"].([]any); ok {
			for _, n := range r {
				req[n.(string)] = true
			}
		}
		for n, p := range props {
			if all || req[n] {
				out[n] = example(p.(map[string]any), all)
			}
		}
		return out
	case "array":
		n := 1
		if mi, ok := s["minItems"].(float64); ok && int(mi) > n {
			n = int(mi)
		}
		items, _ := s["items"].(map[string]any)
		out := make([]any, n)
		for i := range out {
			v := example(items, all)
			if str, ok := v.(string); ok && s["uniqueItems"] == true {
				v = str + strings.Repeat("b", i)
			}
			out[i] = v
		}
		return out
	case "integer", "number":
		if mi, ok := s["minimum"].(float64); ok {
			return mi
		}
		return 1
	case "boolean":
		return true
	case "string":
		if s["format"] == "date-time" {
			return "2026-01-01T00:00:00Z"
		}
		n := 1
		if mi, ok := s["minLength"].(float64); ok && int(mi) > n {
			n = int(mi)
		}
		return strings.Repeat("a", n)
	}
	return map[string]any{}
}

func wrongType(p map[string]any) any {
	switch p["type"] {
	case "string":
		return 12345
	case "integer", "number", "boolean":
		return "not-a-value"
	case "array", "object":
		return "not-a-container"
	}
	return []any{map[string]any{"x": 1}} // untyped (oneOf etc.): an unlikely shape
}

// nestedObject returns an example of a fixed-shape nested object (or
// array of them) with an unknown key added, or nil.
func nestedObject(p map[string]any) any {
	if _, ok := p["properties"].(map[string]any); ok {
		return with(example(p, true).(map[string]any), "zz_unknown_nested", 1)
	}
	if items, ok := p["items"].(map[string]any); ok && p["type"] == "array" {
		if inner := nestedObject(items); inner != nil {
			return []any{inner}
		}
	}
	return nil
}

type bound struct {
	kw string
	v  any
}

func overBounds(p map[string]any) []bound {
	var out []bound
	if n, ok := p["maxLength"].(float64); ok {
		out = append(out, bound{"maxLength", strings.Repeat("a", int(n)+1)})
	}
	if n, ok := p["minLength"].(float64); ok && n > 0 {
		out = append(out, bound{"minLength", strings.Repeat("a", int(n)-1)})
	}
	if n, ok := p["maximum"].(float64); ok {
		out = append(out, bound{"maximum", n + 1})
	}
	if n, ok := p["minimum"].(float64); ok {
		out = append(out, bound{"minimum", n - 1})
	}
	if n, ok := p["maxItems"].(float64); ok {
		items, _ := p["items"].(map[string]any)
		arr := make([]any, int(n)+1)
		for i := range arr {
			v := example(items, true)
			if s, ok := v.(string); ok {
				v = s + fmt.Sprint(i)
			}
			arr[i] = v
		}
		out = append(out, bound{"maxItems", arr})
	}
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		if s, ok := e[0].(string); ok {
			out = append(out, bound{"enum near-miss", strings.ToLower(s) + "x"})
		}
	}
	return out
}
