package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestAgentUsage: the mock agent reports usage as real agents do (token
// counts in its prompt response, its session's cumulative cost and
// context window in usage_update); each turn's usage lands in the
// session's totals and turn rows, the cost of a turn being the growth of
// the cumulative cost; a negative count is recorded as zero; task and
// workspace sums add them; session.usage_updated reaches the workspace
// topic.
func TestAgentUsage(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	heard := e.subscribe(action.WorkspaceTopic(e.workspaceID()))
	task, sid := e.startMock("Usage task", `@usage {"inputTokens":1200,"outputTokens":300,"cachedReadTokens":800,"cachedWriteTokens":50,"thoughtTokens":20}
@cost {"used":2000,"size":200000,"cost":{"amount":0.42,"currency":"USD"}}
@say first turn done`, nil)
	e.waitMessage(task.ID, "message", "first turn done")
	e.waitState(sid, kanban.SessionIdle)
	u := e.waitUsage(sid, 1)
	want := kanban.Tokens{Input: 1200, Output: 300, CachedRead: 800, CachedWrite: 50, Thought: 20}
	if u.Usage.Tokens != want || u.Usage.Cost != (kanban.Cost{Amount: 0.42, Currency: "USD"}) ||
		u.Usage.ContextUsed != 2000 || u.Usage.ContextSize != 200000 || u.Usage.TaskID != task.ID {
		t.Fatalf("after turn 1: got %+v, want tokens %+v, 0.42 USD, context 2000/200000", u.Usage, want)
	}

	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: `@usage {"inputTokens":-5,"outputTokens":10}
@usage {"inputTokens":100}
@cost {"used":3000,"size":200000,"cost":{"amount":0.5,"currency":"USD"}}
@say second turn done`}, nil)
	e.waitMessage(task.ID, "message", "second turn done")
	u = e.waitUsage(sid, 2)
	if u.Usage.Input != 1295 || u.Usage.Output != 310 || u.Usage.Cost.Amount != 0.5 || u.Usage.ContextUsed != 3000 {
		t.Fatalf("after turn 2: got %+v, want 1295 in, 310 out, 0.5 USD, 3000 used", u.Usage)
	}
	if len(u.Turns.Items) != 2 || u.Turns.Items[0].Seq != 2 || u.Turns.Items[0].Input != 95 ||
		u.Turns.Items[0].Cost.Amount != 0.08 || u.Turns.Items[1].Cost.Amount != 0.42 {
		t.Fatalf("turns %+v, want turn 2 (95 in, 0.08) then turn 1 (0.42)", u.Turns.Items)
	}

	var tu, wu action.UsageOut
	e.dispatch(kanban.ActionTaskUsage, map[string]any{"task_id": task.ID}, &tu)
	e.dispatch(kanban.ActionWorkspaceUsage, map[string]any{}, &wu)
	for name, got := range map[string]action.UsageOut{"task": tu, "workspace": wu} {
		if got.Sessions != 1 || got.Turns != 2 || got.Input != 1295 || len(got.Costs) != 1 || got.Costs[0].Amount != 0.5 {
			t.Fatalf("%s usage %+v (%+v), want the session's", name, got, got.UsageTotals)
		}
	}
	// kandev usage prints the same sums; it wants exactly one scope.
	if out := e.cli("usage", "--task", task.ID); !strings.Contains(out, `"input_tokens": 1295`) || !strings.Contains(out, `"turns": 2`) {
		t.Fatalf("kandev usage --task printed %s", out)
	}
	if out := e.cli("usage", "--session", sid, "--limit", "1"); !strings.Contains(out, `"next_cursor"`) || !strings.Contains(out, `"seq": 2`) {
		t.Fatalf("kandev usage --session printed %s", out)
	}
	// The session list (list_task_sessions_kandev over MCP) carries each
	// session's totals.
	var listed kanban.List[kanban.Session]
	e.decode(e.call(e.operatorMCP(), "list_task_sessions_kandev", mustJSON(t, map[string]any{"task_id": task.ID})), &listed)
	if len(listed.Items) != 1 || listed.Items[0].Usage == nil || listed.Items[0].Usage.Turns != 2 || listed.Items[0].Usage.Input != 1295 {
		t.Fatalf("listed sessions %+v, want the session with its usage", listed.Items)
	}
	waitUsageEvents(t, heard, sid, 2)
}

// waitUsageEvents waits until heard has n session.usage_updated events,
// the last one for session sid with n turns.
func waitUsageEvents(t *testing.T, heard *notes, sid string, n int) {
	t.Helper()
	deadline := time.Now().Add(agentWait)
	for {
		heard.mu.Lock()
		events := heard.got[kanban.EventSessionUsageUpdated.Name()]
		heard.mu.Unlock()
		if len(events) >= n {
			var last kanban.SessionUsage
			if err := json.Unmarshal(events[len(events)-1], &last); err != nil || last.SessionID != sid || last.Turns != n {
				t.Fatalf("last %s event %s (%v)", kanban.EventSessionUsageUpdated.Name(), events[len(events)-1], err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d %s events, want %d", len(events), kanban.EventSessionUsageUpdated.Name(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitUsage waits until the session recorded turns turns of usage.
func (e *env) waitUsage(sid string, turns int) action.SessionUsageOut {
	e.t.Helper()
	deadline := time.Now().Add(agentWait)
	var u action.SessionUsageOut
	for time.Now().Before(deadline) {
		e.dispatch(kanban.ActionSessionUsage, map[string]any{"id": sid}, &u)
		if u.Usage.Turns >= turns {
			return u
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("session %s recorded %d turns of usage, want %d", sid, u.Usage.Turns, turns)
	return u
}
