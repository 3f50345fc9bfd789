package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

type refuseBackend struct{}

func (refuseBackend) Call(context.Context, kanban.Action, any, any) error {
	return fmt.Errorf("unused")
}

// TestDifferential: for generated in-budget schemas, the served tool
// (through the one wrapper) accepts and rejects exactly what an
// independent compile of the same schema (a fresh compiler with its
// defaults) accepts and rejects, over generated arguments.
func TestDifferential(t *testing.T) {
	t.Parallel()
	compiled, err := toolserver.Compile()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := toolserver.New(toolserver.Config{Compiled: compiled, Backend: refuseBackend{}, Profile: catalog.DefaultProfile(kanban.ModeTask)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv.MCP().HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"d","version":"1"}}}`))
	rng := rand.New(rand.NewPCG(13, 1))
	var accepted, rejected, schemas int
	for i := range 300 {
		g := &gen{r: rng}
		schema := g.root()
		tl, ref := buildTool("d", wireTool{Name: "t", InputSchema: json.RawMessage(schema)})
		if ref != nil {
			continue // out of budget or not compilable: not served, nothing to compare
		}
		independent := independentCompile(t, schema)
		if independent == nil {
			t.Fatalf("schema %d compiles for the gateway but not independently: %s", i, schema)
		}
		schemas++
		forwarded := 0
		if err := srv.SetUpstream([]toolserver.UpstreamTool{{Wire: tl.wire, Validator: tl.validator,
			Call: func(context.Context, map[string]any) (*mcp.CallToolResult, string) {
				forwarded++
				return mcp.NewToolResultText("ok"), "ok"
			}}}); err != nil {
			t.Fatal(err)
		}
		for range 30 {
			inst := g.instance()
			want := independent.Validate(mustUnmarshal(t, inst)) == nil
			before := forwarded
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"d__t","arguments":%s}}`, inst)
			resp, _ := json.Marshal(srv.MCP().HandleMessage(ctx, json.RawMessage(msg)))
			got := forwarded == before+1
			if got != want {
				t.Fatalf("schema %s\nargs %s\ngateway accepted=%v, independent accepted=%v (%s)", schema, inst, got, want, resp)
			}
			if !got && !bytes.Contains(resp, []byte("invalid arguments for d__t")) {
				t.Fatalf("a rejection without the argument error: %s", resp)
			}
			if got {
				accepted++
			} else {
				rejected++
			}
		}
	}
	t.Logf("%d schemas, %d accepted and %d rejected calls", schemas, accepted, rejected)
	if schemas < 200 || accepted < 1000 || rejected < 1000 {
		t.Fatalf("corpus too one-sided: %d schemas, %d accepted, %d rejected", schemas, accepted, rejected)
	}
}

func independentCompile(t *testing.T, schema string) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("https://example.com/independent.json", doc); err != nil {
		return nil
	}
	s, err := c.Compile("https://example.com/independent.json")
	if err != nil {
		return nil
	}
	return s
}

func mustUnmarshal(t *testing.T, s string) any {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// gen builds random schemas and random arguments: some guided by the
// schema (usually valid), some not (usually invalid).
type gen struct {
	r      *rand.Rand
	props  []string
	likely []func() any
}

var names = []string{"a", "b", "c", "name", "count", "tags", "mode", "items", "meta", "x_y"}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) str(lo, hi int) string {
	return strings.Repeat("abc", 3)[:lo+g.r.IntN(hi-lo+1)]
}

func (g *gen) root() string {
	g.props, g.likely = nil, nil
	n := 1 + g.r.IntN(5)
	var props []string
	for range n {
		p := g.pick(names)
		if strings.Contains(","+strings.Join(g.props, ",")+",", ","+p+",") {
			continue
		}
		sch, likely := g.schema(3)
		g.props, g.likely = append(g.props, p), append(g.likely, likely)
		props = append(props, fmt.Sprintf("%q:%s", p, sch))
	}
	parts := []string{`"type":"object"`, `"properties":{` + strings.Join(props, ",") + `}`}
	if g.r.IntN(2) == 0 {
		parts = append(parts, fmt.Sprintf(`"required":[%q]`, g.props[0]))
	}
	switch g.r.IntN(4) {
	case 0:
		parts = append(parts, `"additionalProperties":false`)
	case 1:
		parts = append(parts, `"additionalProperties":{"type":"integer"}`)
	}
	if g.r.IntN(4) == 0 {
		d, _ := g.schema(2)
		parts = append(parts, `"$defs":{"d":`+d+`}`, fmt.Sprintf(`"dependentSchemas":{%q:{"$ref":"#/$defs/d"}}`, g.pick(names)))
	}
	switch g.r.IntN(6) {
	case 0:
		parts = append(parts, `"$schema":"http://json-schema.org/draft-07/schema#"`)
	case 1:
		parts = append(parts, `"$schema":"https://json-schema.org/draft/2019-09/schema"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// schema returns a subschema and a generator of values it likely accepts.
func (g *gen) schema(depth int) (string, func() any) {
	k := g.r.IntN(12)
	if depth == 0 {
		k = g.r.IntN(5)
	}
	switch k {
	case 0:
		lo, hi := g.r.IntN(3), 2+g.r.IntN(6)
		return fmt.Sprintf(`{"type":"string","minLength":%d,"maxLength":%d}`, lo, hi), func() any { return g.str(lo, hi) }
	case 1:
		lo, hi := -g.r.IntN(5), g.r.IntN(10)
		return fmt.Sprintf(`{"type":"integer","minimum":%d,"maximum":%d}`, lo, hi), func() any { return json.Number(fmt.Sprint(lo + g.r.IntN(hi-lo+1))) }
	case 2:
		lo := -g.r.IntN(3)
		return fmt.Sprintf(`{"type":"number","exclusiveMinimum":%d,"multipleOf":0.5}`, lo), func() any { return json.Number(fmt.Sprint(float64(lo) + 0.5*float64(1+g.r.IntN(6)))) }
	case 3:
		return `{"enum":["red","green",1,null]}`, func() any { return []any{"red", "green", json.Number("1"), nil}[g.r.IntN(4)] }
	case 4:
		i := g.r.IntN(5)
		vals := []any{true, "x", "cab", "anything", "a@b.co"}
		return []string{`{"type":"boolean"}`, `{"const":"x"}`, `{"type":["string","null"],"pattern":"^[a-c]+$"}`, `true`, `{"format":"email"}`}[i], func() any { return vals[i] }
	case 5:
		items, likely := g.schema(depth - 1)
		hi := 1 + g.r.IntN(3)
		return fmt.Sprintf(`{"type":"array","items":%s,"maxItems":%d}`, items, hi), func() any {
			arr := make([]any, g.r.IntN(hi+1))
			for i := range arr {
				arr[i] = likely()
			}
			return arr
		}
	case 6:
		return `{"type":"array","prefixItems":[{"type":"integer"}],"items":{"type":"string"},"uniqueItems":true}`, func() any { return []any{json.Number("1"), "s", "t"} }
	case 7:
		p := g.pick(names)
		sub, likely := g.schema(depth - 1)
		return fmt.Sprintf(`{"type":"object","properties":{%q:%s},"required":[%q],"additionalProperties":false}`, p, sub, p), func() any { return map[string]any{p: likely()} }
	case 8, 9:
		a, la := g.schema(depth - 1)
		b, _ := g.schema(depth - 1)
		return fmt.Sprintf(`{%q:[%s,%s]}`, []string{"anyOf", "oneOf"}[k-8], a, b), la
	case 10:
		a, la := g.schema(depth - 1)
		return fmt.Sprintf(`{"allOf":[%s],"not":{"const":0}}`, a), la
	}
	e, le := g.schema(depth - 1)
	return fmt.Sprintf(`{"if":{"type":"string"},"then":{"maxLength":3},"else":%s}`, e), func() any {
		if g.r.IntN(2) == 0 {
			return "abc"
		}
		return le()
	}
}

func (g *gen) instance() string {
	obj := map[string]any{}
	guided := g.r.IntN(3) > 0
	for i, p := range g.props {
		if g.r.IntN(3) == 0 {
			continue
		}
		if guided {
			obj[p] = g.likely[i]()
		} else {
			obj[p] = g.value(2)
		}
	}
	if g.r.IntN(6) == 0 {
		obj[g.pick(names)] = g.value(1)
	}
	b, _ := json.Marshal(obj)
	return string(b)
}

func (g *gen) value(depth int) any {
	k := g.r.IntN(9)
	if depth == 0 {
		k = g.r.IntN(6)
	}
	switch k {
	case 0:
		return g.pick([]string{"", "a", "abc", "red", "x", "toolongvalue", "a@b.co", "cab"})
	case 1:
		return json.Number(fmt.Sprint(g.r.IntN(12) - 4))
	case 2:
		return json.Number(g.pick([]string{"0.5", "1.5", "2.25", "-0.5", "1.0", "3"}))
	case 3:
		return g.r.IntN(2) == 0
	case 4:
		return nil
	case 5:
		return "green"
	case 6, 7:
		arr := make([]any, g.r.IntN(4))
		for i := range arr {
			arr[i] = g.value(depth - 1)
		}
		return arr
	}
	m := map[string]any{}
	for range g.r.IntN(3) {
		m[g.pick(names)] = g.value(depth - 1)
	}
	return m
}
