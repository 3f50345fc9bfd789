package toolserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

var update = flag.Bool("update", false, "rewrite golden files")

// recorder is a catalog.Backend that records the actions it receives and
// answers each with an empty object: it proves whether a call reached the
// backend. (Store-backed behaviour is tested end to end in internal/app.)
type recorder struct {
	calls []kanban.Action
}

func (r *recorder) Call(_ context.Context, name kanban.Action, _ any, out any) error {
	r.calls = append(r.calls, name)
	if out != nil {
		return json.Unmarshal([]byte(`{"items":[],"task":{},"deduplicated":false,"question":{"id":"q1","state":"pending"}}`), out)
	}
	return nil
}

func mustCompile(t testing.TB) *Compiled {
	t.Helper()
	c, err := Compile()
	if err != nil {
		t.Fatalf("compile catalog: %v", err)
	}
	return c
}

// clientFor starts a server for a profile and connects a real in-process
// MCP client session to it.
func clientFor(t *testing.T, c *Compiled, p catalog.Profile, b catalog.Backend) (*Server, *client.Client) {
	t.Helper()
	s, err := New(Config{Compiled: c, Profile: p, Backend: b})
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	return s, connect(t, s)
}

type mcpClient = client.Client

// connect opens an initialized in-process MCP client session on s.
func connect(t *testing.T, s *Server) *client.Client {
	t.Helper()
	cl, err := client.NewInProcessClient(s.MCP())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	ctx := context.Background()
	if err := cl.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "golden", Version: "1"}
	if _, err := cl.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// listWire returns tools/list's tools exactly as the server sent them on
// the client's session (the raw result, not the client library's
// re-serialisation of its Tool type).
func listWire(t *testing.T, cl *client.Client) []map[string]any {
	t.Helper()
	resp, err := cl.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
		JSONRPC: "2.0", ID: mcp.NewRequestId(int64(9001)), Method: "tools/list"})
	if err != nil || resp.Error != nil {
		t.Fatalf("tools/list: %v %v", err, resp)
	}
	var out struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(resp.Result, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return out.Tools
}

// goldenProfiles are the profiles whose tools/list is pinned: every
// mode's default, and task mode with each forge's derived capability (a
// task with a repository of that forge), named mode+capability.
func goldenProfiles() map[string]catalog.Profile {
	out := map[string]catalog.Profile{}
	for _, m := range kanban.AllModes {
		out[string(m)] = catalog.DefaultProfile(m)
	}
	for _, cp := range kanban.ForgeCapabilities {
		p := catalog.DefaultProfile(kanban.ModeTask)
		p.Capabilities = append(p.Capabilities, cp)
		out[string(kanban.ModeTask)+"+"+cp] = p
	}
	return out
}

// TestGoldenToolsList pins what a client sees in every mode. Run
// `go test ./internal/mcp/toolserver -run Golden -update` after changing a tool.
func TestGoldenToolsList(t *testing.T) {
	c := mustCompile(t)
	for m, prof := range goldenProfiles() {
		t.Run(m, func(t *testing.T) {
			_, cl := clientFor(t, c, prof, &recorder{})
			tools := listWire(t, cl)
			got, err := json.MarshalIndent(tools, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "tools_"+m+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (run with -update): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("tools/list for mode %s differs from %s; run with -update and review the diff", m, path)
			}
			compact, _ := json.Marshal(tools)
			t.Logf("mode %s: %d tools, %d bytes of tools/list", m, len(tools), len(compact))
		})
	}
}

// TestWireAudit checks discovery quality on the wire, in every mode.
func TestWireAudit(t *testing.T) {
	c := mustCompile(t)
	for _, m := range kanban.AllModes {
		_, cl := clientFor(t, c, catalog.DefaultProfile(m), &recorder{})
		for _, tool := range listWire(t, cl) {
			name, _ := tool["name"].(string)
			if !strings.HasSuffix(name, "_kandev") {
				t.Errorf("%s: name must end in _kandev", name)
			}
			if s, _ := tool["title"].(string); s == "" {
				t.Errorf("%s: no title", name)
			}
			if s, _ := tool["description"].(string); len(s) < 20 {
				t.Errorf("%s: description missing or too short", name)
			}
			ann, _ := tool["annotations"].(map[string]any)
			for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
				if _, ok := ann[h].(bool); !ok {
					t.Errorf("%s: annotation %s not set explicitly", name, h)
				}
			}
			in, _ := tool["inputSchema"].(map[string]any)
			if props, _ := in["properties"].(map[string]any); len(props) == 0 {
				want := `{"additionalProperties":false,"properties":{},"type":"object"}`
				if got, _ := json.Marshal(in); string(got) != want {
					t.Errorf("%s: parameter-less schema is %s, want %s", name, got, want)
				}
			}
			auditSchema(t, name, "inputSchema", in)
		}
	}
}

// auditSchema walks a schema: every property has a description and every
// object with properties is closed; open maps must be explicit records.
func auditSchema(t *testing.T, tool, path string, s map[string]any) {
	t.Helper()
	if props, ok := s["properties"].(map[string]any); ok {
		if s["additionalProperties"] != false && s["unevaluatedProperties"] != false {
			t.Errorf("%s %s: object with properties is not closed", tool, path)
		}
		for n, p := range props {
			ps, _ := p.(map[string]any)
			if d, _ := ps["description"].(string); d == "" {
				t.Errorf("%s %s/%s: property without a description", tool, path, n)
			}
			auditSchema(t, tool, path+"/"+n, ps)
		}
	}
	if t2, _ := s["type"].(string); t2 == "object" && s["properties"] == nil {
		if _, ok := s["propertyNames"]; !ok {
			t.Errorf("%s %s: open object without propertyNames (not an explicit record)", tool, path)
		}
		if ap, ok := s["additionalProperties"].(map[string]any); !ok || (ap["type"] == nil && ap["oneOf"] == nil && ap["enum"] == nil) {
			t.Errorf("%s %s: record without a typed additionalProperties", tool, path)
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := s[k].(map[string]any); ok {
			auditSchema(t, tool, path+"/"+k, sub)
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if list, ok := s[k].([]any); ok {
			for i, b := range list {
				if bs, ok := b.(map[string]any); ok {
					auditSchema(t, tool, path+"/"+k+"/"+itoa(i), bs)
				}
			}
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestEveryToolInAMode: no declared tool is unreachable — each is served
// in some mode, by default or with every capability (capability-gated
// groups such as parent-question, and the forge tools with the derived
// forge capabilities) — and the table names only declared
// groups (catalog.New enforces it; this pins it).
func TestEveryToolInAMode(t *testing.T) {
	c := mustCompile(t)
	seen := map[string]bool{}
	for _, m := range kanban.AllModes {
		every := slices.Concat(kanban.Capabilities, kanban.ForgeCapabilities)
		for _, p := range []catalog.Profile{catalog.DefaultProfile(m), {Mode: m, Capabilities: every}} {
			tools, err := c.cat.Tools(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range tools {
				seen[tl.Name] = true
			}
		}
	}
	var missing []string
	for _, tl := range c.cat.All() {
		if !seen[tl.Name] {
			missing = append(missing, tl.Name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("tools in no mode: %v", missing)
	}
}
