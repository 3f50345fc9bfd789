package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// scrape reads /metrics with token and parses it with Prometheus' own
// text parser.
func (e *env) scrape(token string) (int, map[string]*dto.MetricFamily) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/metrics", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("scrape: %v", err)
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode, nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		e.t.Fatalf("parse the exposition: %v", err)
	}
	return res.StatusCode, fams
}

// sample is the value of family name's series with exactly labels (a
// counter's or gauge's value, a histogram's count); 0 when absent.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, l.GetName(), l.GetValue())
		}
		if !slices.Equal(got, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

// TestMetricsCountTheWorkload runs a scripted workload — MCP calls that
// succeed, fail their schema and name a missing task, an agent session's
// calls through its bridge, an unknown WebSocket action — and checks that
// /metrics, parsed with Prometheus' text parser, counts exactly that; that
// it needs the operator token; and that no label carries a caller's value.
func TestMetricsCountTheWorkload(t *testing.T) {
	e := newEnv(t)
	if code, _ := e.scrape(""); code != http.StatusUnauthorized {
		t.Fatalf("scrape without a token: %d, want 401", code)
	}
	if code, _ := e.scrape("not-the-token"); code != http.StatusUnauthorized {
		t.Fatalf("scrape with a wrong token: %d, want 401", code)
	}
	ext := e.operatorMCP()
	task := e.newTask("metrics")
	s := e.sessionMCP(kanban.ModeTask, task.ID)
	_, before := e.scrape(e.token)

	for range 7 {
		e.call(ext, "list_tasks_kandev", `{"limit":5}`)
	}
	for range 3 {
		if res := e.call(ext, "list_tasks_kandev", `{"limit":0}`); !res.IsError {
			t.Fatal("limit 0 was accepted")
		}
	}
	missing := "0f5e0c1e-0000-4000-8000-" + strings.Repeat("9", 12)
	for range 2 {
		if res := e.call(ext, "archive_task_kandev", fmt.Sprintf(`{"task_id":%q}`, missing)); !res.IsError {
			t.Fatal("a missing task was found")
		}
	}
	for range 4 {
		e.call(s.Client, "list_tasks_kandev", `{"limit":5}`)
	}
	canary := "metrics-canary-" + task.ID
	if err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.Action(canary), map[string]any{}, nil); kanban.ErrorCode(err) != kanban.CodeUnknownAction {
		t.Fatalf("unknown action: %v", err)
	}
	_, after := e.scrape(e.token)
	checkWorkloadCounts(t, before, after)
	if q, ok := after["kandev_tasks_queued"]; !ok || len(q.GetMetric()) != 1 || q.GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Error("kandev_tasks_queued is not 0 on a board with no WIP limit")
	}
	if n := sample(after, "kandev_websocket_connections"); n < 1 {
		t.Errorf("websocket connections %v with the session's bridge connected", n)
	}
	if sample(after, "kandev_store_commits_total") < 1 || sample(after, "kandev_store_write_transaction_duration_seconds") < 1 {
		t.Error("the store's writes (the task and session creates) were not counted")
	}
	checkLabelsBounded(t, e, after, task.ID, s.ID, canary)
}

// checkWorkloadCounts checks what TestMetricsCountTheWorkload's workload
// added between two scrapes.
func checkWorkloadCounts(t *testing.T, before, after map[string]*dto.MetricFamily) {
	t.Helper()
	delta := func(name string, labels ...string) float64 {
		return sample(after, name, labels...) - sample(before, name, labels...)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"kandev_mcp_tool_calls_total", []string{"outcome", "ok", "tool", "list_tasks_kandev"}, 7},
		{"kandev_mcp_tool_calls_total", []string{"outcome", "refused", "tool", "list_tasks_kandev"}, 3},
		{"kandev_mcp_tool_calls_total", []string{"outcome", "refused", "tool", "archive_task_kandev"}, 2},
		{"kandev_mcp_tool_call_duration_seconds", []string{"tool", "list_tasks_kandev"}, 10},
		{"kandev_refusals_total", []string{"kind", "invalid_arguments", "where", "mcp"}, 3},
		{"kandev_refusals_total", []string{"kind", "NOT_FOUND", "where", "mcp"}, 2},
		// The schema refusals never reach an action.
		{"kandev_action_calls_total", []string{"action", "task.list", "caller", "operator", "outcome", "ok"}, 7},
		{"kandev_action_calls_total", []string{"action", "task.archive", "caller", "operator", "outcome", "refused"}, 2},
		{"kandev_action_calls_total", []string{"action", "task.list", "caller", "session", "outcome", "ok"}, 4},
		{"kandev_action_calls_total", []string{"action", "unknown", "caller", "operator", "outcome", "refused"}, 1},
		{"kandev_refusals_total", []string{"kind", "UNKNOWN_ACTION", "where", "action"}, 1},
	} {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v: counted %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// checkLabelsBounded checks every label value of the exposition: none
// holds an id or a caller's string, and action labels are registered
// action names or "unknown".
func checkLabelsBounded(t *testing.T, e *env, fams map[string]*dto.MetricFamily, secrets ...string) {
	t.Helper()
	names := e.b.reg.Names()
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				for _, s := range secrets {
					if strings.Contains(l.GetValue(), s) || strings.Contains(l.GetValue(), e.token) {
						t.Errorf("%s label %s holds a caller's value", name, l.GetName())
					}
				}
				if l.GetName() == "action" && l.GetValue() != "unknown" && !slices.Contains(names, kanban.Action(l.GetValue())) {
					t.Errorf("%s: action label %q is no registered action", name, l.GetValue())
				}
			}
		}
	}
}

// TestMetricsCountAgents runs one mock agent's turn and checks the agent
// gauges and turn counters as /metrics shows them.
func TestMetricsCountAgents(t *testing.T) {
	e := newAgentEnv(t)
	_, before := e.scrape(e.token)
	_, sid := e.startMock("metrics agent", "hello", nil)
	e.waitState(sid, kanban.SessionIdle)
	_, during := e.scrape(e.token)
	if got := sample(during, "kandev_agents_running", "agent_type", "mock-agent", "executor", "local"); got != 1 {
		t.Errorf("agents running (mock-agent, local) = %v, want 1", got)
	}
	turns := sample(during, "kandev_agent_turns_total", "stop_reason", "end_turn") - sample(before, "kandev_agent_turns_total", "stop_reason", "end_turn")
	if turns != 1 {
		t.Errorf("ended turns counted %v, want 1", turns)
	}
	if n := sample(during, "kandev_agent_turn_duration_seconds") - sample(before, "kandev_agent_turn_duration_seconds"); n != 1 {
		t.Errorf("turn durations observed %v, want 1", n)
	}
	if q := sample(during, "kandev_agent_queue_length"); q != 0 {
		t.Errorf("agent queue %v, want 0", q)
	}
}

// TestMetricsCountClusterEvents creates tasks on backend A of two on one
// PostgreSQL database and checks that backend B's /metrics shows each
// event it relayed in its lag histogram, and A's store its commits.
func TestMetricsCountClusterEvents(t *testing.T) {
	a, b := twoBackends(t)
	ws, _ := a.board()
	heard := b.subscribe(action.WorkspaceTopic(ws))
	_, before := b.scrape(b.token)
	no := false
	const n = 5
	for i := range n {
		a.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: fmt.Sprintf("relayed %d", i), StartAgent: &no}, nil)
	}
	waitFor(t, func() bool { return len(heard.ids(kanban.EventTaskCreated.Name())) == n })
	_, after := b.scrape(b.token)
	if got := sample(after, "kandev_cluster_event_lag_seconds") - sample(before, "kandev_cluster_event_lag_seconds"); got < n {
		t.Errorf("backend B observed the lag of %v relayed events, want at least %d", got, n)
	}
	if _, ok := after["kandev_cluster_events_dropped_total"]; !ok {
		t.Error("no dropped-events counter on a backend with a bus")
	}
	if _, onA := a.scrape(a.token); sample(onA, "kandev_store_commits_total") < n {
		t.Errorf("backend A counted %v commits, want at least %d", sample(onA, "kandev_store_commits_total"), n)
	}
}

// TestMetricsCountBridgeCalls: the tool calls a session's bridge answers
// — those its schemas refuse, which never leave it, included — reach
// /metrics in its reports (here the last one, sent when it closes); a
// report naming no catalog tool, an unknown outcome or a repeated entry
// is refused whole without echoing it, and only sessions may report.
func TestMetricsCountBridgeCalls(t *testing.T) {
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	_, before := e.scrape(e.token)
	for range 3 {
		e.call(s.Client, "list_tasks_kandev", `{"limit":5}`)
	}
	for range 2 {
		if res := e.call(s.Client, "list_tasks_kandev", `{"limit":0}`); !res.IsError {
			t.Fatal("limit 0 was accepted")
		}
	}
	s.MCP.Close()
	s.MCP.Close() // a second Close does nothing
	_, after := e.scrape(e.token)
	delta := func(name string, labels ...string) float64 {
		return sample(after, name, labels...) - sample(before, name, labels...)
	}
	for _, c := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"outcome", "ok", "tool", "list_tasks_kandev"}, 3},
		{[]string{"outcome", "refused", "tool", "list_tasks_kandev"}, 2},
	} {
		if got := delta("kandev_bridge_tool_calls_total", c.labels...); got != c.want {
			t.Errorf("bridge calls %v: counted %v, want %v", c.labels, got, c.want)
		}
	}
	if got := delta("kandev_refusals_total", "kind", "invalid_arguments", "where", "bridge"); got != 2 {
		t.Errorf("bridge refusals counted %v, want 2", got)
	}

	other := e.sessionMCP(kanban.ModeTask, "")
	c := e.wsClient(other.Token, nil)
	canary := "bridge-canary-" + other.ID
	for _, bad := range []map[string]any{
		{"calls": []map[string]any{{"tool": canary, "outcome": "ok", "count": 1}}},
		{"calls": []map[string]any{{"tool": "list_tasks_kandev", "outcome": canary, "count": 1}}},
		{"calls": []map[string]any{{"tool": "list_tasks_kandev", "outcome": "ok", "count": 1}, {"tool": "list_tasks_kandev", "outcome": "ok", "count": 2}}},
		{"calls": []map[string]any{{"tool": "list_tasks_kandev", "outcome": "ok", "count": 0}}},
		{"calls": []map[string]any{}},
	} {
		err := c.Call(t.Context(), kanban.ActionSessionReportCalls, bad, nil)
		if kanban.ErrorCode(err) != kanban.CodeValidation || strings.Contains(err.Error(), canary) {
			t.Errorf("bad report %v: got %v, want VALIDATION_ERROR naming no value", bad, err)
		}
	}
	good := map[string]any{"calls": []map[string]any{{"tool": "list_tasks_kandev", "outcome": "ok", "count": 1}}}
	if err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionSessionReportCalls, good, nil); kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Errorf("operator report: %v, want FORBIDDEN", err)
	}
	_, last := e.scrape(e.token)
	if got := sample(last, "kandev_bridge_tool_calls_total", "outcome", "ok", "tool", "list_tasks_kandev") -
		sample(after, "kandev_bridge_tool_calls_total", "outcome", "ok", "tool", "list_tasks_kandev"); got != 0 {
		t.Errorf("refused reports counted %v calls", got)
	}
	checkLabelsBounded(t, e, last, canary, s.ID, other.ID)
}
