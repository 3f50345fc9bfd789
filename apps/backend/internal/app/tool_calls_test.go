package app

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

// dbStr returns one string column of one row.
func dbStr(e *env, query string, args ...any) string {
	e.t.Helper()
	var s sql.NullString
	if err := e.b.store.DB().QueryRow(query, args...).Scan(&s); err != nil {
		e.t.Fatalf("query %q: %v", query, err)
	}
	return s.String
}

// dbInt returns one integer column of one row.
func dbInt(e *env, query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.b.store.DB().QueryRow(query, args...).Scan(&n); err != nil {
		e.t.Fatalf("query %q: %v", query, err)
	}
	return n
}

// refused calls a tool that must fail with exactly want and change nothing.
func refused(e *env, c *client.Client, tool, args, want string) {
	e.t.Helper()
	before := e.fingerprint()
	r := e.call(c, tool, args)
	if !r.IsError || text(r) != want {
		e.t.Fatalf("%s: got error=%v %q, want %q", tool, r.IsError, text(r), want)
	}
	if e.fingerprint() != before {
		e.t.Fatalf("%s: the refused call changed the database", tool)
	}
}

// callJSON calls a tool that must succeed and decodes its result; the
// structured content must equal the text and match the tool's output
// schema. The schema is read before the call, which may switch the mode
// and unlist the tool (set_task_title_kandev).
func callJSON(e *env, c *client.Client, tool, args string, v any) {
	e.t.Helper()
	schema := outputSchema(e, c, tool)
	r := e.call(c, tool, args)
	e.decode(r, v)
	sc, err := json.Marshal(r.StructuredContent)
	if err != nil || r.StructuredContent == nil {
		e.t.Fatalf("%s: no structured content", tool)
	}
	var a, b any
	_ = json.Unmarshal(sc, &a)
	_ = json.Unmarshal([]byte(text(r)), &b)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		e.t.Fatalf("%s: structured content differs from the text", tool)
	}
	checkOutput(e, tool, schema, sc)
}

// checkOutputSchema validates structured content against the tool's
// result contract, as strict clients (the TypeScript SDK) do where it is
// advertised.
func checkOutputSchema(e *env, c *client.Client, tool string, structured []byte) {
	e.t.Helper()
	checkOutput(e, tool, outputSchema(e, c, tool), structured)
}

// outputSchema compiles the tool's result contract (toolserver.ResultSchema).
// The tool must be listed; where tools/list advertises an output schema it
// must be that contract.
func outputSchema(e *env, c *client.Client, tool string) *jsonschema.Schema {
	e.t.Helper()
	res, err := c.ListTools(e.t.Context(), mcpListReq())
	if err != nil {
		e.t.Fatalf("tools/list: %v", err)
	}
	idx := slices.IndexFunc(res.Tools, func(tl mcp.Tool) bool { return tl.Name == tool })
	if idx < 0 {
		e.t.Fatalf("%s: not listed", tool)
	}
	def, ok := e.catalogTool(tool)
	if !ok || def.Output == nil {
		e.t.Fatalf("%s: no result contract", tool)
	}
	raw, err := toolserver.ResultSchema(def)
	if err != nil {
		e.t.Fatal(err)
	}
	// The client keeps type, properties, required and additionalProperties
	// of an advertised output schema: compare that much.
	var contract mcp.ToolOutputSchema
	if err := json.Unmarshal(raw, &contract); err != nil {
		e.t.Fatal(err)
	}
	listed, _ := json.Marshal(res.Tools[idx].OutputSchema)
	want, _ := json.Marshal(contract)
	if !def.ShowOutput {
		want, _ = json.Marshal(mcp.ToolOutputSchema{})
	}
	if string(listed) != string(want) {
		e.t.Fatalf("%s: the advertised output schema is not the result contract (or is advertised without ShowOutput)", tool)
	}
	schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		e.t.Fatalf("%s: output schema: %v", tool, err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("mem:///out.json", schema); err != nil {
		e.t.Fatal(err)
	}
	sch, err := comp.Compile("mem:///out.json")
	if err != nil {
		e.t.Fatalf("%s: compile output schema: %v", tool, err)
	}
	return sch
}

var testCatalog = sync.OnceValues(catalog.New)

// catalogTool is the catalog's declaration of tool.
func (e *env) catalogTool(tool string) (*catalog.Tool, bool) {
	cat, err := testCatalog()
	if err != nil {
		e.t.Fatal(err)
	}
	i := slices.IndexFunc(cat.All(), func(t *catalog.Tool) bool { return t.Name == tool })
	if i < 0 {
		return nil, false
	}
	return cat.All()[i], true
}

// checkOutput validates structured content against a compiled schema.
func checkOutput(e *env, tool string, sch *jsonschema.Schema, structured []byte) {
	e.t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		e.t.Fatalf("%s: structured content does not match the output schema: %v", tool, err)
	}
}
