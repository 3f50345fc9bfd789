package app

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/logctx"
)

// Canaries the JSON log test puts where secrets and user text go; none
// may reach the log.
const (
	canaryToken   = "kandev-canary-operator-token-7c1d"
	canaryTitle   = "canary-title-b42e"
	canaryPrompt  = "canary-prompt-93fa"
	canaryHeader  = "canary-header-5d07"
	canaryURLPass = "canary-urlpass-e611"
	canaryArg     = "canary-argument-0c3b"
)

// TestServeJSONLogsCarryIDsAndNoCanary runs the real `kandev serve
// --log-format json --log-level debug` with a canary operator token, and
// drives /mcp calls, an agent session (whose bridge attaches over /ws),
// refused requests with canary headers and a URL with a canary password,
// and a webhook delivery: every stderr line is one JSON object with time,
// level and msg; request lines name their request_id, the session's lines
// its session_id; no canary appears anywhere.
func TestServeJSONLogsCarryIDsAndNoCanary(t *testing.T) {
	t.Parallel()
	bin := kandevBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serve := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--log-format", "json", "--log-level", "debug")
	serve.Env = append(os.Environ(), "KANDEV_TOKEN="+canaryToken)
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	serve.Stderr = logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	e := &env{t: t, url: "http://" + readServeAddr(t, stdout), token: canaryToken}
	sid := logWorkload(t, e)
	time.Sleep(200 * time.Millisecond) // the last lines of the requests above
	checkJSONLog(t, logs.String(), sid)
}

// logWorkload is the JSON log test's traffic; it returns the agent
// session's id.
func logWorkload(t *testing.T, e *env) string {
	c, err := client.NewStreamableHttpClient(e.url+"/mcp", transport.WithHTTPHeaders(map[string]string{
		"Authorization": "Bearer " + canaryToken, "X-Canary": canaryHeader}))
	if err != nil {
		t.Fatal(err)
	}
	e.initialize(c)
	mock := mockProfileOverMCP(e, c)
	var created action.TaskCreateOut
	e.decode(e.call(c, "create_task_kandev", mustJSON(t, map[string]any{"title": canaryTitle,
		"agent_profile_id": mock, "prompt": "@tool list_tasks_kandev {\"limit\":1}\n@say " + canaryPrompt})), &created)
	waitConversation(t, e, c, created.Task.ID, canaryPrompt)
	e.call(c, "create_task_kandev", mustJSON(t, map[string]any{"title": "second", "description": canaryArg}))
	// An unknown tool argument carrying a canary: refused, and its value unlogged.
	_, _ = callErr(c, "list_tasks_kandev", mustJSON(t, map[string]any{"limit": 1, canaryArg: canaryArg}))
	for _, req := range []struct{ method, url, auth string }{
		{"POST", e.url + "/mcp", "Bearer " + canaryHeader},
		{"GET", e.url + "/ws", "Bearer " + canaryHeader},
		{"GET", "http://user:" + canaryURLPass + "@" + strings.TrimPrefix(e.url, "http://") + "/healthz?password=" + canaryURLPass, ""},
		{"POST", e.url + "/webhooks/github", "token " + canaryHeader},
	} {
		r, err := http.NewRequest(req.method, req.url, strings.NewReader(`{"x":"`+canaryArg+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", req.auth)
		r.Header.Set("X-Hub-Signature-256", "sha256="+canaryHeader)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.Header.Get(RequestIDHeader) == "" {
			t.Fatalf("%s %s: no %s header", req.method, req.url, RequestIDHeader)
		}
	}
	return created.SessionID
}

// checkJSONLog checks the JSON log test's stderr.
func checkJSONLog(t *testing.T, log, sid string) {
	t.Helper()
	for _, c := range []string{canaryToken, canaryTitle, canaryPrompt, canaryHeader, canaryURLPass, canaryArg} {
		if i := strings.Index(log, c); i >= 0 {
			t.Fatalf("canary %q in the log: …%s…", c, log[max(0, i-300):min(len(log), i+100)])
		}
	}
	var lines, toolCalls, httpLines, sessionLines, bridgeLines, runtimeLines int
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines++
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, sc.Text())
		}
		for _, k := range []string{"time", "level", "msg"} {
			if s, _ := rec[k].(string); s == "" {
				t.Fatalf("log line without %s: %s", k, sc.Text())
			}
		}
		rid, _ := rec[logctx.RequestKey].(string)
		msg := rec["msg"].(string)
		if (msg == "tool call" || msg == "http request" || msg == "ws request") && rid == "" {
			t.Fatalf("request line without %s: %s", logctx.RequestKey, sc.Text())
		}
		switch msg {
		case "tool call":
			toolCalls++
		case "http request":
			httpLines++
		}
		if rec[logctx.SessionKey] == sid {
			sessionLines++
			if msg == "ws request" && rid != "" {
				bridgeLines++
			}
			if msg == "agent session state" {
				runtimeLines++
			}
		}
	}
	t.Logf("%d JSON lines: %d tool call, %d http request, %d of the session (%d from its bridge, %d from the runtime)",
		lines, toolCalls, httpLines, sessionLines, bridgeLines, runtimeLines)
	if toolCalls < 4 || httpLines < 4 || bridgeLines == 0 || runtimeLines == 0 {
		t.Fatalf("got %d tool call, %d http request, %d bridge and %d runtime lines of the session, want ≥4, ≥4, ≥1, ≥1",
			toolCalls, httpLines, bridgeLines, runtimeLines)
	}
}

// TestServeLogFlags checks --log-format and --log-level: json writes JSON
// at the level asked, a bad value of either is refused.
func TestServeLogFlags(t *testing.T) {
	var buf syncBuffer
	cfg, err := serveConfig([]string{"--data-dir", t.TempDir(), "--log-format", "json", "--log-level", "warn"}, Stdio{Out: &buf, Err: &buf})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger.Info("dropped")
	cfg.Logger.Warn("kept")
	var rec map[string]any
	if err := json.Unmarshal([]byte(buf.String()), &rec); err != nil || rec["msg"] != "kept" {
		t.Fatalf("got %q (%v), want one JSON line with msg kept", buf.String(), err)
	}
	for _, bad := range [][]string{{"--log-format", "xml"}, {"--log-level", "loud"}} {
		if _, err := serveConfig(append([]string{"--data-dir", t.TempDir()}, bad...), Stdio{Out: &buf, Err: &buf}); err == nil || strings.Contains(err.Error(), bad[1]) {
			t.Fatalf("%v: got %v, want a refusal that does not echo the value", bad, err)
		}
	}
}
