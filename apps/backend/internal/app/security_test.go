package app

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ratelimit"
)

// limitedEnv is a backend whose limits never refill (a frozen clock):
// each caller has exactly its bursts.
func limitedEnv(t *testing.T, calls, writes int) *env {
	frozen := time.Unix(1_800_000_000, 0)
	return newEnvWith(t, func(c *Config) {
		c.Security.Limits = ratelimit.Config{Calls: ratelimit.Limit{Rate: 0.001, Burst: calls},
			Writes: ratelimit.Limit{Rate: 0.001, Burst: writes}, Now: func() time.Time { return frozen }}
	})
}

// An agent flooding writes through its MCP server gets a tool error that
// says when to retry, its refused calls write nothing, and the operator
// is still served; every acknowledged write is in the audit log with the
// session as its actor.
func TestRateLimitedSessionOverMCP(t *testing.T) {
	e := limitedEnv(t, 200, 6)
	s := e.sessionMCP(kanban.ModeTask, "")
	var acked int
	var refusal string
	for i := range 20 {
		r := e.call(s.Client, "create_task_kandev", `{"title":"Flood","parent_id":"self","start_agent":false}`)
		if r.IsError {
			refusal = text(r)
			break
		}
		acked++
		if i == 19 {
			t.Fatal("20 writes: none refused, want the write burst to run out")
		}
	}
	if !strings.HasPrefix(refusal, "RATE_LIMITED: rate limit of writes reached for this caller; retry in ") {
		t.Fatalf("got refusal %q, want RATE_LIMITED with a retry time", refusal)
	}
	before := e.fingerprint()
	for range 5 {
		if r := e.call(s.Client, "create_task_kandev", `{"title":"Flood","parent_id":"self","start_agent":false}`); !r.IsError {
			t.Fatal("a write after the refusal: got served, want refused")
		}
	}
	if after := e.fingerprint(); after != before {
		t.Error("refused writes changed the database")
	}
	e.newTask("The operator's own") // another caller is unaffected

	var log kanban.List[kanban.AuditEntry]
	e.dispatch(kanban.ActionAuditList, action.AuditListIn{Actor: "session:" + s.ID, Action: string(kanban.ActionTaskCreate), Limit: 200}, &log)
	if len(log.Items) != acked {
		t.Fatalf("got %d audit entries of the session's task.create, want %d (one per acknowledged write)", len(log.Items), acked)
	}
	for _, en := range log.Items {
		if en.Via != "ws" || en.SessionID != s.ID || en.TaskID != s.TaskID || len(en.Targets) < 2 {
			t.Errorf("got entry %+v, want via ws, the session's binding, parent and created task as targets", en)
		}
	}
}

// The operator token flooding the external endpoint gets HTTP 429 with
// Retry-After once its calls are spent, before mcp-go reads the request
// (a call that races past it gets the RATE_LIMITED tool error); the
// write it made is audited as coming over mcp from loopback.
func TestRateLimitedOperatorOverHTTP(t *testing.T) {
	e := limitedEnv(t, 8, 4)
	c := e.operatorMCP()
	e.call(c, "create_task_kandev", `{"title":"Over MCP","start_agent":false}`)
	refused := false
	for range 10 {
		if _, err := callErr(c, "list_workspaces_kandev", `{}`); err != nil {
			refused = true
			break
		}
	}
	if !refused {
		t.Fatal("10 calls past a burst of 8: none refused")
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, e.url+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("got %d Retry-After %q, want 429 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
	}
	entries, err := e.b.store.ListAudit(context.Background(), kanban.AuditFilter{Action: kanban.ActionTaskCreate})
	if err != nil || len(entries.Items) != 1 {
		t.Fatalf("audit: got %+v, %v, want the one task.create", entries, err)
	}
	if en := entries.Items[0]; en.Actor != "operator" || en.Via != "mcp" || !strings.HasPrefix(en.From, "127.0.0.1:") {
		t.Errorf("got entry %+v, want the operator over mcp from 127.0.0.1", en)
	}
}

// kandev audit export writes every matching entry as one JSON line,
// through as many pages as it takes, and the retention sweep at start
// removes entries past the retention.
func TestAuditExportAndRetention(t *testing.T) {
	e := newEnv(t)
	task := e.newTask("Exported")
	for range 3 {
		e.dispatch(kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "title": "Exported again"}, nil)
	}
	out := e.cli("audit", "export", "--target", task.ID)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want 4 (a create and 3 updates):\n%s", len(lines), out)
	}
	for i, l := range lines {
		var en kanban.AuditEntry
		if err := json.Unmarshal([]byte(l), &en); err != nil || en.Actor != "operator" {
			t.Fatalf("line %d: got %q (%v), want an operator entry", i, l, err)
		}
	}
	if got := e.cli("audit", "export", "--action", "task.update", "--target", task.ID); strings.Count(got, "\n") != 3 {
		t.Errorf("action filter: got %q, want 3 lines", got)
	}

	old := kanban.AuditEntry{ID: kanban.NewID(), Actor: "operator", ActorKind: "operator", Action: kanban.ActionTaskMove,
		Targets: []string{}, Via: "ws", At: kanban.Now().Add(-48 * time.Hour)}
	if err := e.b.store.AppendAudit(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	e.b.cfg.Security = SecurityConfig{AuditRetention: 24 * time.Hour, AuditSweep: time.Hour}
	e.b.runAuditSweep()
	waitFor(t, func() bool {
		l, err := e.b.store.ListAudit(context.Background(), kanban.AuditFilter{Action: kanban.ActionTaskMove})
		return err == nil && len(l.Items) == 0
	})
	if l, _ := e.b.store.ListAudit(context.Background(), kanban.AuditFilter{Target: task.ID}); len(l.Items) != 4 {
		t.Errorf("after the sweep: got %d entries of the task, want the 4 recent ones kept", len(l.Items))
	}
}

// The external endpoint reads the audit log as list_audit_entries_kandev;
// an agent session has no such tool, and its token cannot call audit.list.
func TestAuditOverExternalMCP(t *testing.T) {
	e := newEnv(t)
	c := e.operatorMCP()
	var created action.TaskCreateOut
	e.decode(e.call(c, "create_task_kandev", `{"title":"Seen by the audit","start_agent":false}`), &created)
	var page kanban.List[kanban.AuditEntry]
	e.decode(e.call(c, "list_audit_entries_kandev", `{"target":"`+created.Task.ID+`"}`), &page)
	if len(page.Items) != 1 || page.Items[0].Action != kanban.ActionTaskCreate || page.Items[0].Via != "mcp" {
		t.Fatalf("got %+v, want the one task.create over mcp", page.Items)
	}
	if r := e.call(c, "list_audit_entries_kandev", `{"since":"yesterday"}`); !r.IsError {
		t.Error("a malformed since: got served, want a tool error")
	}
	s := e.sessionMCP(kanban.ModeConfig, "")
	if toolNames(t, s.Client)["list_audit_entries_kandev"] {
		t.Error("a config session sees list_audit_entries_kandev")
	}
	p := action.Principal{Kind: action.Session, SessionID: s.ID, TaskID: s.TaskID, WorkspaceID: s.WorkspaceID}
	if err := e.tryDispatch(p, kanban.ActionAuditList, map[string]any{}, nil); kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Errorf("audit.list as a session: got %v, want FORBIDDEN", err)
	}
}
