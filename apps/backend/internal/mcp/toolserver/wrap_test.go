package toolserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

const canary = "sk-live-CANARY0123456789"

// TestCanaryNeverEchoed sends a secret-looking value in a failing field,
// as an unknown key and as an open-map key to every tool of every mode: it
// must appear neither in the result nor in the logs.
func TestCanaryNeverEchoed(t *testing.T) {
	c := mustCompile(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, m := range kanban.AllModes {
		s, err := New(Config{Compiled: c, Profile: catalog.DefaultProfile(m), Backend: &recorder{}, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		_, cl := clientForServer(t, s)
		for _, tool := range listWire(t, cl) {
			name := tool["name"].(string)
			in := tool["inputSchema"].(map[string]any)
			full := example(in, true).(map[string]any)
			cases := []map[string]any{with(full, canary, canary)}
			props, _ := in["properties"].(map[string]any)
			for n, p := range props {
				ps := p.(map[string]any)
				if ml, ok := ps["maxLength"].(float64); ok {
					cases = append(cases, with(full, n, canary+strings.Repeat("x", int(ml))))
				}
				if _, ok := ps["propertyNames"]; ok {
					cases = append(cases, with(full, n, map[string]any{canary + "!": []any{canary}}))
				}
				if ps["type"] == "integer" {
					cases = append(cases, with(full, n, canary))
				}
			}
			for _, args := range cases {
				res := callRaw(t, cl, name, args)
				if !res.IsError {
					t.Errorf("%s: a call with a canary was accepted", name)
				}
				if strings.Contains(text(res), "CANARY") {
					t.Errorf("%s: result echoes the canary: %s", name, text(res))
				}
			}
		}
	}
	if strings.Contains(logs.String(), "CANARY") {
		t.Fatalf("logs contain the canary")
	}
	if !strings.Contains(logs.String(), "invalid_arguments") {
		t.Fatalf("logs do not record the refused calls (test would not see an echo)")
	}
}

func clientForServer(t *testing.T, s *Server) (*Server, *mcpClient) {
	t.Helper()
	cl := connect(t, s)
	return s, cl
}

// TestModeSwitchWhileCalling switches a server between task and config
// mode while clients call create_task_kandev: every call either reaches
// the task-mode validator of that tool or is refused as an unknown tool —
// never a validator/handler of the other mode. Run with -race.
func TestModeSwitchWhileCalling(t *testing.T) {
	c := mustCompile(t)
	s, err := New(Config{Compiled: c, Profile: catalog.DefaultProfile(kanban.ModeTask), Backend: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	cl := connect(t, s)
	const want = "invalid arguments for create_task_kandev: /title: longer than 60 characters (maxLength)"
	args := map[string]any{"title": strings.Repeat("t", 61)}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		modes := []kanban.Mode{kanban.ModeConfig, kanban.ModeTask}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.SetProfile(catalog.DefaultProfile(modes[i%2])); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var validated, unknown int
	var mu sync.Mutex
	var callers sync.WaitGroup
	for range 4 {
		callers.Add(1)
		go func() {
			defer callers.Done()
			for range 200 {
				req := mcp.CallToolRequest{}
				req.Params.Name = "create_task_kandev"
				req.Params.Arguments = args
				res, err := cl.CallTool(context.Background(), req)
				mu.Lock()
				switch {
				// A call racing the swap may pass the preflight and then
				// miss the tool in mcp-go's map: still an unknown tool.
				case err != nil && (strings.Contains(err.Error(), "unknown tool") || strings.Contains(err.Error(), "not found")):
					unknown++
				case err == nil && res.IsError && text(res) == want:
					validated++
				default:
					t.Errorf("unexpected outcome: err=%v res=%v", err, res)
				}
				mu.Unlock()
			}
		}()
	}
	callers.Wait()
	close(stop)
	wg.Wait()
	if validated+unknown != 800 {
		t.Fatalf("got %d outcomes, want 800", validated+unknown)
	}
	t.Logf("validated %d, unknown %d", validated, unknown)
}

// TestPreflightNeverEchoes: tools/call requests mcp-go would answer with
// caller data in the message are refused without it.
func TestPreflightNeverEchoes(t *testing.T) {
	c := mustCompile(t)
	s, err := New(Config{Compiled: c, Profile: catalog.DefaultProfile(kanban.ModeTask), Backend: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sk-live-CANARY_kandev","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tasks_kandev","arguments":{"limit":1e999}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":17,"arguments":{}}}`,
	} {
		e := s.preflight([]byte(msg))
		if e == nil || e.Code != -32602 || strings.Contains(string(e.Response()), "CANARY") || strings.Contains(string(e.Response()), "999") {
			t.Errorf("%s: got %+v, want a -32602 error without caller data", msg, e)
		}
	}
	if e := s.preflight([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tasks_kandev","arguments":{"limit":5}}}`)); e != nil {
		t.Fatalf("a valid call was refused: %+v", e)
	}
}

func TestPreflightMethods(t *testing.T) {
	c := mustCompile(t)
	s, err := New(Config{Compiled: c, Profile: catalog.DefaultProfile(kanban.ModeTask), Backend: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		msg  string
		code int // 0: passes
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"sk-live-CANARY"}`, -32601},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, -32601},
		{`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"sk-live-CANARY"}}`, -32602},
		{`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`, 0},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"sk-live-CANARY"}}`, -32602},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0},
		{`{"jsonrpc":"2.0","method":"notifications/sk-live-CANARY"}`, 0}, // notifications get no answer
	}
	for _, tc := range cases {
		e := s.preflight([]byte(tc.msg))
		switch {
		case tc.code == 0 && e != nil:
			t.Errorf("%s: refused: %+v", tc.msg, e)
		case tc.code != 0 && (e == nil || e.Code != tc.code):
			t.Errorf("%s: got %+v, want code %d", tc.msg, e, tc.code)
		case e != nil && strings.Contains(string(e.Response()), "CANARY"):
			t.Errorf("%s: echoes the canary", tc.msg)
		}
	}
}

func TestMarshalResult(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string // "" means an error
	}{
		{"reply", catalog.Reply(`{"items":[]}`), `{"items":[]}`},
		{"empty reply", catalog.Reply(nil), `null`},
		{"valid raw message", json.RawMessage(`[1, 2]`), `[1, 2]`},
		{"invalid raw message", json.RawMessage(`{"a":`), ""},
		{"value", map[string]int{"n": 1}, `{"n":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := marshalResult(tt.v)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %s, want an error", b)
				}
				return
			}
			if err != nil || string(b) != tt.want {
				t.Fatalf("got %s, %v, want %s", b, err, tt.want)
			}
		})
	}
}

// TestResultSameBytes pins the result path: the handler's JSON is encoded
// once, the structured content is those very bytes (not a copy, not a
// re-encoding), the text content is the same JSON, and a tool without an
// output schema gets the text only.
func TestResultSameBytes(t *testing.T) {
	b, err := marshalResult(catalog.Reply(`{"items":[{"id":"t1","title":"<a & b>"}],"next_cursor":"c"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := Result(b, true)
	raw, ok := r.StructuredContent.(json.RawMessage)
	if !ok || len(raw) != len(b) || &raw[0] != &b[0] {
		t.Fatalf("structured content %T is not the encoded bytes themselves", r.StructuredContent)
	}
	wire, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Content           []struct{ Type, Text string } `json:"content"`
		StructuredContent json.RawMessage               `json:"structuredContent"`
	}
	if err := json.Unmarshal(wire, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Content) != 1 || got.Content[0].Type != "text" || got.Content[0].Text != string(b) {
		t.Fatalf("text content: got %+v, want the JSON %s", got.Content, b)
	}
	var a, c any
	if json.Unmarshal(got.StructuredContent, &a) != nil || json.Unmarshal(b, &c) != nil || !reflect.DeepEqual(a, c) {
		t.Fatalf("structured content on the wire: got %s, want %s", got.StructuredContent, b)
	}
	if plain := Result(b, false); plain.StructuredContent != nil {
		t.Error("a tool without an output schema got structured content")
	}
}
