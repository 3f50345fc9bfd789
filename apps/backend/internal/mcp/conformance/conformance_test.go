package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// rpc is one JSON-RPC message as the client sees it.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// session is a raw Streamable HTTP client session: every test sees the
// exact messages and content types on the wire.
type session struct {
	t   *testing.T
	url string
	id  string
}

func start(t *testing.T) *session {
	t.Helper()
	s, err := New("/mcp", "test")
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		_ = s.Shutdown(t.Context())
		hs.Close()
	})
	c := &session{t: t, url: hs.URL + "/mcp"}
	msgs, _, hdr := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"go-test","version":"1"}}}`)
	if len(msgs) != 1 || msgs[0].Error != nil {
		t.Fatalf("initialize: got %+v, want one result", msgs)
	}
	c.id = hdr.Get("Mcp-Session-Id")
	if c.id == "" {
		t.Fatal("initialize: got no Mcp-Session-Id, want one")
	}
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// post sends one message and returns the messages of the response (one
// JSON body or every SSE event), its content type and its headers.
func (c *session) post(body string) ([]rpc, string, http.Header) {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.id != "" {
		req.Header.Set("Mcp-Session-Id", c.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("post: %v", err)
	}
	defer func() { _ = res.Body.Close() }()
	ct := res.Header.Get("Content-Type")
	if res.StatusCode == http.StatusAccepted {
		return nil, ct, res.Header
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		c.t.Fatalf("post: got HTTP %d %s, want 200", res.StatusCode, b)
	}
	var msgs []rpc
	if strings.HasPrefix(ct, "text/event-stream") {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				msgs = append(msgs, decode(c.t, data))
			}
		}
		return msgs, ct, res.Header
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return append(msgs, decode(c.t, string(b))), ct, res.Header
}

func decode(t *testing.T, s string) rpc {
	t.Helper()
	var m rpc
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return m
}

// callResult is the part of a tools/call result the tests read.
type callResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type, Text string
	} `json:"content"`
}

func (c *session) call(id int, tool, args string) (callResult, []rpc) {
	c.t.Helper()
	msgs, _, _ := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	last := msgs[len(msgs)-1]
	if last.Error != nil {
		c.t.Fatalf("%s: got JSON-RPC error %d %s, want a result", tool, last.Error.Code, last.Error.Message)
	}
	var r callResult
	if err := json.Unmarshal(last.Result, &r); err != nil {
		c.t.Fatalf("%s: decode result: %v", tool, err)
	}
	return r, msgs[:len(msgs)-1]
}

func TestToolsList(t *testing.T) {
	t.Parallel()
	c := start(t)
	msgs, _, _ := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var res struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(msgs[0].Result, &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema["type"] != "object" {
			t.Errorf("%s: got description %q schema %v, want both set", tool.Name, tool.Description, tool.InputSchema)
		}
		if tool.Name == "json_schema_2020_12_tool" {
			s := tool.InputSchema
			if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" || s["$defs"] == nil || s["additionalProperties"] != false {
				t.Errorf("json_schema_2020_12_tool: got schema %v, want $schema, $defs and additionalProperties preserved", s)
			}
		}
	}
	slices.Sort(names)
	want := []string{"json_schema_2020_12_tool", "test_error_handling", "test_simple_text", "test_tool_with_logging", "test_tool_with_progress"}
	if !slices.Equal(names, want) {
		t.Fatalf("got tools %v, want %v", names, want)
	}
}

func TestCalls(t *testing.T) {
	t.Parallel()
	c := start(t)
	tests := []struct {
		tool, args string
		isError    bool
		text       string // prefix of the first content text
	}{
		{"test_simple_text", `null`, false, SimpleText},
		{"test_error_handling", `{}`, true, ErrorText},
		{"json_schema_2020_12_tool", `{"name":"n","address":{"city":"c"}}`, false, `received {"address":{"city":"c"},"name":"n"}`},
		{"json_schema_2020_12_tool", `{"names":"n"}`, true, "invalid arguments for json_schema_2020_12_tool: unknown field at /"},
		{"json_schema_2020_12_tool", `{"address":{"city":7}}`, true, "invalid arguments for json_schema_2020_12_tool: /address/city: "},
		{"test_simple_text", `{"x":1}`, true, "invalid arguments for test_simple_text: "},
		{"test_simple_text", `[]`, true, "invalid arguments for test_simple_text: /: expected object"},
	}
	for i, tc := range tests {
		r, _ := c.call(10+i, tc.tool, tc.args)
		if r.IsError != tc.isError || len(r.Content) != 1 || !strings.HasPrefix(r.Content[0].Text, tc.text) {
			t.Errorf("%s %s: got isError=%v content %+v, want isError=%v text starting %q", tc.tool, tc.args, r.IsError, r.Content, tc.isError, tc.text)
		}
	}
}

// logTexts returns the data of the notifications/message messages.
func logTexts(t *testing.T, msgs []rpc) []string {
	var out []string
	for _, m := range msgs {
		if m.Method != "notifications/message" {
			continue
		}
		var p struct {
			Level string `json:"level"`
			Data  string `json:"data"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || p.Level != "info" {
			t.Fatalf("got log notification %s, want level info with string data", m.Params)
		}
		out = append(out, p.Data)
	}
	return out
}

func TestLoggingFollowsSetLevel(t *testing.T) {
	t.Parallel()
	c := start(t)
	for i, tc := range []struct {
		level string
		want  []string
	}{
		{"warning", nil},
		{"debug", LogMessages},
		{"info", LogMessages},
		{"error", nil},
	} {
		msgs, _, _ := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"logging/setLevel","params":{"level":%q}}`, 20+2*i, tc.level))
		if len(msgs) != 1 || string(msgs[0].Result) != "{}" {
			t.Fatalf("setLevel %s: got %+v, want an empty result", tc.level, msgs)
		}
		r, notes := c.call(21+2*i, "test_tool_with_logging", `{}`)
		if r.IsError {
			t.Fatalf("level %s: got tool error %+v", tc.level, r.Content)
		}
		if got := logTexts(t, notes); !slices.Equal(got, tc.want) {
			t.Errorf("level %s: got log messages %q, want %q", tc.level, got, tc.want)
		}
	}
}

// TestConcurrentProgressStreams runs three calls at once on one session:
// each answers on its own SSE stream ending with its own result, and every
// progress notification of every call arrives exactly once.
//
// Which stream carries a notification is not asserted: mcp-go (v1.2.x)
// queues a session's notifications on one channel that every in-flight
// request of the session drains, so a call's progress can travel on a
// sibling call's stream. Clients route progress by token, so nothing is
// lost; the spec only says such messages SHOULD relate to their request.
func TestConcurrentProgressStreams(t *testing.T) {
	t.Parallel()
	c := start(t)
	const n = 3
	var wg sync.WaitGroup
	type out struct {
		ct   string
		msgs []rpc
	}
	outs := make([]out, n)
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"tok-%d"}}}`, 100+i, i)
			msgs, ct, _ := c.post(body)
			outs[i] = out{ct, msgs}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("concurrent calls did not finish within 20s")
	}
	got := map[string][]float64{}
	for i, o := range outs {
		if !strings.HasPrefix(o.ct, "text/event-stream") || len(o.msgs) == 0 {
			t.Fatalf("call %d: got content type %q with %d messages, want an SSE stream", i, o.ct, len(o.msgs))
		}
		for _, m := range o.msgs[:len(o.msgs)-1] {
			var p struct {
				Token    string  `json:"progressToken"`
				Progress float64 `json:"progress"`
				Total    float64 `json:"total"`
			}
			if m.Method != "notifications/progress" || json.Unmarshal(m.Params, &p) != nil || p.Total != 100 {
				t.Fatalf("call %d: got %s %s, want progress notifications of 100", i, m.Method, m.Params)
			}
			got[p.Token] = append(got[p.Token], p.Progress)
		}
		last := o.msgs[len(o.msgs)-1]
		if string(last.ID) != fmt.Sprint(100+i) || last.Result == nil {
			t.Errorf("call %d: got last message %+v, want the result of request %d", i, last, 100+i)
		}
	}
	for i := range n {
		tok := fmt.Sprintf("tok-%d", i)
		slices.Sort(got[tok])
		if !slices.Equal(got[tok], ProgressSteps) {
			t.Errorf("%s: got progress %v, want %v", tok, got[tok], ProgressSteps)
		}
	}
}

func TestNoProgressWithoutToken(t *testing.T) {
	t.Parallel()
	c := start(t)
	r, notes := c.call(5, "test_tool_with_progress", `{}`)
	if r.IsError || len(notes) != 0 {
		t.Fatalf("got %+v with notifications %+v, want a result and no notifications", r, notes)
	}
}

// TestNoStandaloneStream: GET is refused (405), so no stream other than a
// request's own can take that request's notifications.
func TestNoStandaloneStream(t *testing.T) {
	t.Parallel()
	c := start(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, c.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("got HTTP %d for GET, want 405", res.StatusCode)
	}
}
