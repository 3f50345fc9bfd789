package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func sessionPrincipal(s *kanban.Session) action.Principal {
	return action.Principal{Kind: action.Session, SessionID: s.ID, TaskID: s.TaskID, WorkspaceID: s.WorkspaceID}
}

// TestUpstreamActions covers the session plumbing (upstream.config,
// upstream.report) and the operator views (upstream.list, upstream.refused):
// who may call them, that secrets reach only the session of the profile,
// that bad reports change nothing, and pagination.
func TestUpstreamActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task := e.newTask("Upstream task")
	var a, other action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, &a)
	var agents kanban.List[kanban.Agent]
	e.dispatch(kanban.ActionAgentList, action.ListIn{}, &agents)
	var prof kanban.AgentProfile
	e.dispatch(kanban.ActionAgentProfileCreate, action.AgentProfileCreateIn{AgentID: agents.Items[0].ID, Name: "Plain"}, &prof)
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID, AgentProfileID: prof.ID}, &other)
	servers := map[string]kanban.MCPServerConfig{
		"fs":  {Type: "stdio", Command: "fs-server", Env: map[string]string{"API_KEY": "s3cret"}, Proxy: true, TimeoutSeconds: 30},
		"web": {Type: "http", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer tok"}},
	}
	var cfg kanban.MCPConfig
	e.dispatch(kanban.ActionMCPConfigUpdate, action.MCPConfigUpdateIn{AgentProfileID: a.Session.AgentProfileID, Servers: servers}, &cfg)
	if cfg.Servers["fs"].Env["API_KEY"] != action.SecretMask || !cfg.Servers["fs"].Proxy || cfg.Servers["fs"].TimeoutSeconds != 30 {
		t.Fatalf("stored config read back as %+v, want proxy, timeout and a masked secret", cfg.Servers["fs"])
	}

	var got action.UpstreamConfigOut
	if err := e.tryDispatch(sessionPrincipal(a.Session), kanban.ActionUpstreamConfig, action.NoIn{}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Servers) != 1 || got.Servers["fs"].Env["API_KEY"] != "s3cret" {
		t.Fatalf("session's proxied servers: got %+v, want only fs with its secret", got.Servers)
	}
	got = action.UpstreamConfigOut{}
	if err := e.tryDispatch(sessionPrincipal(other.Session), kanban.ActionUpstreamConfig, action.NoIn{}, &got); err != nil || len(got.Servers) != 0 {
		t.Fatalf("another profile's session: got %+v, %v, want no servers", got.Servers, err)
	}
	if err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionUpstreamConfig, action.NoIn{}, &got); kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Fatalf("operator upstream.config: got %v, want FORBIDDEN", err)
	}
	off := false
	e.dispatch(kanban.ActionMCPConfigUpdate, action.MCPConfigUpdateIn{AgentProfileID: a.Session.AgentProfileID, Enabled: &off}, &cfg)
	got = action.UpstreamConfigOut{}
	if err := e.tryDispatch(sessionPrincipal(a.Session), kanban.ActionUpstreamConfig, action.NoIn{}, &got); err != nil || len(got.Servers) != 0 {
		t.Fatalf("disabled MCP config: got %+v, %v, want no servers", got.Servers, err)
	}
	if _, err := e.b.svc.SetMode(t.Context(), a.Session.ID, kanban.ModeConfig); err != nil {
		t.Fatal(err)
	}
	if err := e.tryDispatch(sessionPrincipal(a.Session), kanban.ActionUpstreamConfig, action.NoIn{}, &got); err != nil {
		t.Fatalf("config-mode session: %v (the plumbing must work in every mode)", err)
	}

	checkBadReports(e, a.Session)

	checkReportListed(e, a.Session)

	checkProxyBounds(e, a.Session.AgentProfileID)
}

// TestUpstreamReportOverWebSocket: a session's report, sent over the real
// WebSocket API with the session token, reaches an operator subscribed to
// the workspace as session.upstreams_changed and is listed for it.
func TestUpstreamReportOverWebSocket(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task := e.newTask("Report task")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, &created)
	notes := make(chan string, 16)
	op := e.wsClient(e.token, notes)
	ctx := t.Context()
	if err := op.Call(ctx, kanban.ActionSubscribe, SubscribeIn{Topics: []string{action.WorkspaceTopic(created.Session.WorkspaceID)}}, nil); err != nil {
		t.Fatal(err)
	}
	sess := e.wsClient(created.Token, nil)
	rep := action.UpstreamReportIn{Servers: []action.UpstreamReport{{Name: "fs", Type: "stdio", State: "unavailable",
		Detail: "exited with status 1; retrying in 500ms", ToolsRefused: 1, Refused: []action.UpstreamRefusedOne{{Tool: "bomb", Limit: "visits", Reason: "too many"}}}}}
	if err := sess.Call(ctx, kanban.ActionUpstreamReport, rep, nil); err != nil {
		t.Fatal(err)
	}
	for got := ""; got != kanban.EventSessionUpstreamsChanged.Name(); {
		select {
		case got = <-notes:
		case <-time.After(10 * time.Second):
			t.Fatal("no session.upstreams_changed notification")
		}
	}
	var list kanban.List[kanban.UpstreamServer]
	if err := op.Call(ctx, kanban.ActionUpstreamList, action.UpstreamListIn{SessionID: created.Session.ID}, &list); err != nil || len(list.Items) != 1 || list.Items[0].State != "unavailable" {
		t.Fatalf("upstream.list: %+v, %v", list.Items, err)
	}
	if err := sess.Call(ctx, kanban.ActionUpstreamList, action.UpstreamListIn{SessionID: created.Session.ID}, &list); kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Fatalf("session upstream.list over the WebSocket: got %v, want FORBIDDEN", err)
	}
}

// checkBadReports: upstream.report's refusals change nothing.
func checkBadReports(e *env, sess *kanban.Session) {
	t := e.t
	t.Helper()
	before := e.fingerprint()
	bad := []action.UpstreamReportIn{
		{Servers: []action.UpstreamReport{{Name: "fs", Type: "stdio", State: "exploded"}}},
		{Servers: []action.UpstreamReport{{Name: "bad name", Type: "stdio", State: "ready"}}},
		{Servers: []action.UpstreamReport{{Name: "fs", Type: "stdio", State: "ready", ToolsRefused: 1, Refused: []action.UpstreamRefusedOne{{Tool: "evil\x1b", Limit: "visits"}}}}},
		{Servers: []action.UpstreamReport{{Name: "fs", Type: "stdio", State: "ready", ToolsRefused: 1, Refused: []action.UpstreamRefusedOne{{Tool: "t", Limit: "Not A Limit"}}}}},
		{Servers: []action.UpstreamReport{{Name: "fs", Type: "stdio", State: "ready", Detail: strings.Repeat("x", 301)}}},
	}
	for i, r := range bad {
		if err := e.tryDispatch(sessionPrincipal(sess), kanban.ActionUpstreamReport, r, nil); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Errorf("bad report %d: got %v, want VALIDATION_ERROR", i, err)
		}
	}
	if e.fingerprint() != before {
		t.Fatal("a refused report changed the database")
	}
}

// checkReportListed: a good report is listed, its refused tools
// paginated, for the operator only.
func checkReportListed(e *env, sess *kanban.Session) {
	t := e.t
	t.Helper()
	rep := action.UpstreamReport{Name: "fs", Type: "stdio", State: "ready", ToolsServed: 3, ToolsRefused: 7}
	for i := range 7 {
		rep.Refused = append(rep.Refused, action.UpstreamRefusedOne{Tool: fmt.Sprintf("t%d", i), Limit: "visits", Reason: "too big"})
	}
	if err := e.tryDispatch(sessionPrincipal(sess), kanban.ActionUpstreamReport, action.UpstreamReportIn{Servers: []action.UpstreamReport{rep}}, nil); err != nil {
		t.Fatal(err)
	}
	var list kanban.List[kanban.UpstreamServer]
	e.dispatch(kanban.ActionUpstreamList, action.UpstreamListIn{SessionID: sess.ID}, &list)
	if len(list.Items) != 1 || list.Items[0].ToolsRefused != 7 || list.Items[0].State != "ready" {
		t.Fatalf("upstream.list: %+v", list.Items)
	}
	var all []kanban.RefusedTool
	cursor := ""
	for range 10 {
		var page kanban.List[kanban.RefusedTool]
		e.dispatch(kanban.ActionUpstreamRefused, action.UpstreamRefusedIn{SessionID: sess.ID, Limit: 3, Cursor: cursor}, &page)
		all = append(all, page.Items...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(all) != 7 || all[0].Tool != "t0" || all[6].Tool != "t6" {
		t.Fatalf("refused pages: got %+v, want t0..t6", all)
	}
	if err := e.tryDispatch(sessionPrincipal(sess), kanban.ActionUpstreamList, action.UpstreamListIn{SessionID: sess.ID}, &list); kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Fatalf("session upstream.list: got %v, want FORBIDDEN", err)
	}
}

// checkProxyBounds: timeout_seconds needs proxy and stays within 1..600.
func checkProxyBounds(e *env, profileID string) {
	t := e.t
	t.Helper()
	for _, srv := range []kanban.MCPServerConfig{
		{Type: "stdio", Command: "x", TimeoutSeconds: 30},
		{Type: "stdio", Command: "x", Proxy: true, TimeoutSeconds: 601},
		{Type: "stdio", Command: "x", Proxy: true, TimeoutSeconds: -1},
	} {
		err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionMCPConfigUpdate,
			action.MCPConfigUpdateIn{AgentProfileID: profileID, Servers: map[string]kanban.MCPServerConfig{"s": srv}}, nil)
		if kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Errorf("%+v: got %v, want VALIDATION_ERROR", srv, err)
		}
	}
	checkBudgetBounds(e, profileID)
}

// checkBudgetBounds: bad byte budgets are refused at config time with a
// message naming the field (never the value) and change nothing; good ones
// are stored and read back.
func checkBudgetBounds(e *env, profileID string) {
	t := e.t
	t.Helper()
	var before kanban.MCPConfig
	e.dispatch(kanban.ActionMCPConfigGet, action.MCPConfigGetIn{AgentProfileID: profileID}, &before)
	for _, c := range []struct {
		srv   kanban.MCPServerConfig
		field string
	}{
		{kanban.MCPServerConfig{Type: "http", URL: "https://x", MaxToolBytes: 9001}, "max_tool_bytes"},
		{kanban.MCPServerConfig{Type: "http", URL: "https://x", Proxy: true, MaxToolBytes: kanban.MaxUpstreamToolBytes + 1}, "max_tool_bytes"},
		{kanban.MCPServerConfig{Type: "http", URL: "https://x", Proxy: true, MaxToolBytes: -7}, "max_tool_bytes"},
		{kanban.MCPServerConfig{Type: "http", URL: "https://x", Proxy: true, MaxServerBytes: kanban.MaxUpstreamServerBytes + 1}, "max_server_bytes"},
		{kanban.MCPServerConfig{Type: "http", URL: "https://x", Proxy: true, MaxToolBytes: 9001, MaxServerBytes: 9000}, "max_server_bytes"},
	} {
		err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionMCPConfigUpdate,
			action.MCPConfigUpdateIn{AgentProfileID: profileID, Servers: map[string]kanban.MCPServerConfig{"s": c.srv}}, nil)
		msg := fmt.Sprint(err)
		t.Logf("refused: %s", msg)
		if kanban.ErrorCode(err) != kanban.CodeValidation || !strings.Contains(msg, c.field) ||
			strings.Contains(msg, "9001") || strings.Contains(msg, "1048577") || strings.Contains(msg, "8388609") {
			t.Errorf("%+v: got %v, want a VALIDATION_ERROR naming %s and no value", c.srv, err, c.field)
		}
	}
	var after kanban.MCPConfig
	e.dispatch(kanban.ActionMCPConfigGet, action.MCPConfigGetIn{AgentProfileID: profileID}, &after)
	if !after.UpdatedAt.Equal(before.UpdatedAt) || len(after.Servers) != len(before.Servers) {
		t.Fatalf("refused budgets changed the config: %+v, was %+v", after, before)
	}
	good := kanban.MCPServerConfig{Type: "http", URL: "https://x", Proxy: true, MaxToolBytes: 20_000, MaxServerBytes: 100_000}
	var stored kanban.MCPConfig
	e.dispatch(kanban.ActionMCPConfigUpdate, action.MCPConfigUpdateIn{AgentProfileID: profileID, Servers: map[string]kanban.MCPServerConfig{"s": good}}, &stored)
	if s := stored.Servers["s"]; s.MaxToolBytes != 20_000 || s.MaxServerBytes != 100_000 {
		t.Fatalf("stored budgets read back as %d / %d, want 20000 / 100000", s.MaxToolBytes, s.MaxServerBytes)
	}
}
