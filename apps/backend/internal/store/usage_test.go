package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// usageFixture is a board with two tasks: counted with sessions s1 and
// s2, other with s3.
type usageFixture struct {
	s           *Store
	b           board
	task, other *kanban.Task
	s1, s2, s3  *kanban.Session
}

func newUsageFixture(t *testing.T) *usageFixture {
	t.Helper()
	ctx := context.Background()
	f := &usageFixture{s: newTestStore(t)}
	f.b = newBoard(t, f.s, "usage")
	f.task, f.other = mustTask(t, f.s, f.b, "", "counted"), mustTask(t, f.s, f.b, "", "other")
	for _, x := range []struct {
		dst  **kanban.Session
		task string
	}{{&f.s1, f.task.ID}, {&f.s2, f.task.ID}, {&f.s3, f.other.ID}} {
		sess, _, err := f.s.CreateSession(ctx, kanban.SessionCreate{TaskID: x.task})
		if err != nil {
			t.Fatal(err)
		}
		*x.dst = sess
	}
	return f
}

func (f *usageFixture) record(t *testing.T, r kanban.UsageReport) *kanban.SessionUsage {
	t.Helper()
	u, err := f.s.RecordUsage(context.Background(), r)
	if err != nil {
		t.Fatalf("record %+v: %v", r, err)
	}
	return u
}

func usd(a float64) *kanban.Cost { return &kanban.Cost{Amount: a, Currency: "USD"} }

// TestUsage: turns add to their session's totals; the cost of a turn is
// the growth of the agent's cumulative cost (all of it in a new ACP
// session); task and workspace sums add their sessions per currency;
// absurd values are clamped; a missing session is NOT_FOUND and writes
// nothing; deleting the task removes its usage.
func TestUsage(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		f := newUsageFixture(t)
		checkSessionUsage(t, f)
		checkUsageSums(t, f)
		checkUsageRefusals(t, f)
		checkUsageClamped(t, f)
		if err := f.s.DeleteTask(context.Background(), f.task.ID); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, f.s, "session_usage"); n != 1 {
			t.Fatalf("got %d usage rows after deleting the task, want 1 (the other task's)", n)
		}
	})
}

func checkSessionUsage(t *testing.T, f *usageFixture) {
	t.Helper()
	ctx, s := context.Background(), f.s
	if u, turns, err := s.SessionUsage(ctx, f.s1.ID, kanban.Page{}); err != nil || u.Turns != 0 || len(turns.Items) != 0 || u.TaskID != f.task.ID {
		t.Fatalf("fresh session's usage %+v %+v, %v", u, turns, err)
	}
	f.record(t, kanban.UsageReport{SessionID: f.s1.ID, AgentSessionID: "a", Tokens: kanban.Tokens{Input: 100, Output: 20, CachedRead: 5},
		Cost: usd(0.25), ContextUsed: 1000, ContextSize: 200000})
	u := f.record(t, kanban.UsageReport{SessionID: f.s1.ID, AgentSessionID: "a", Tokens: kanban.Tokens{Input: 50, Output: 10, CachedWrite: 3, Thought: 7},
		Cost: usd(0.40)})
	want := kanban.Tokens{Input: 150, Output: 30, CachedRead: 5, CachedWrite: 3, Thought: 7}
	if u.Turns != 2 || u.Tokens != want || u.Cost != *usd(0.40) || u.ContextUsed != 1000 || u.ContextSize != 200000 {
		t.Fatalf("after two turns: got %+v, want tokens %+v, cost 0.40 USD, context kept", u, want)
	}
	// A new ACP session restarts the agent's cumulative cost.
	if u = f.record(t, kanban.UsageReport{SessionID: f.s1.ID, AgentSessionID: "b", Tokens: kanban.Tokens{Input: 1}, Cost: usd(0.10)}); u.Cost.Amount != 0.5 {
		t.Fatalf("new ACP session: got cost %v, want 0.5", u.Cost.Amount)
	}
	_, turns, err := s.SessionUsage(ctx, f.s1.ID, kanban.Page{Limit: 2})
	if err != nil || len(turns.Items) != 2 || turns.Items[0].Seq != 3 || turns.Items[1].Seq != 2 || turns.NextCursor == "" {
		t.Fatalf("first page of turns %+v, %v", turns, err)
	}
	if turns.Items[1].Cost.Amount != 0.15 || turns.Items[1].Input != 50 {
		t.Fatalf("turn 2: got %+v, want cost 0.15 and 50 input tokens", turns.Items[1])
	}
	if _, turns, err = s.SessionUsage(ctx, f.s1.ID, kanban.Page{Limit: 2, Cursor: turns.NextCursor}); err != nil ||
		len(turns.Items) != 1 || turns.Items[0].Seq != 1 || turns.NextCursor != "" {
		t.Fatalf("second page of turns %+v, %v", turns, err)
	}
	byID, err := s.UsageOf(ctx, []string{f.s1.ID, f.s2.ID, "missing"})
	if err != nil || len(byID) != 1 || byID[f.s1.ID].Turns != 3 {
		t.Fatalf("usage of sessions: %+v, %v; want only s1's, with 3 turns", byID, err)
	}
}

func checkUsageSums(t *testing.T, f *usageFixture) {
	t.Helper()
	ctx, s := context.Background(), f.s
	f.record(t, kanban.UsageReport{SessionID: f.s2.ID, Tokens: kanban.Tokens{Input: 1000, Output: 1}, Cost: &kanban.Cost{Amount: 2, Currency: "EUR"}})
	f.record(t, kanban.UsageReport{SessionID: f.s3.ID, Tokens: kanban.Tokens{Input: 7}})
	tu, err := s.TaskUsage(ctx, f.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantCosts := fmt.Sprint([]kanban.Cost{{Amount: 2, Currency: "EUR"}, {Amount: 0.5, Currency: "USD"}})
	if tu.Sessions != 2 || tu.Turns != 4 || tu.Input != 1151 || tu.Output != 31 || fmt.Sprint(tu.Costs) != wantCosts {
		t.Fatalf("task usage %+v, want 2 sessions, 4 turns, 1151 in, 31 out, costs %s", tu, wantCosts)
	}
	wu, err := s.WorkspaceUsage(ctx, f.b.ws.ID)
	if err != nil || wu.Sessions != 3 || wu.Turns != 5 || wu.Input != 1158 || fmt.Sprint(wu.Costs) != wantCosts {
		t.Fatalf("workspace usage %+v, %v; want 3 sessions, 5 turns, 1158 in, costs %s", wu, err, wantCosts)
	}
	if eu, err := s.TaskUsage(ctx, mustTask(t, s, f.b, "", "idle").ID); err != nil || eu.Sessions != 0 || len(eu.Costs) != 0 {
		t.Fatalf("a task without usage: %+v, %v", eu, err)
	}
}

func checkUsageRefusals(t *testing.T, f *usageFixture) {
	t.Helper()
	ctx, s := context.Background(), f.s
	checkRefusals(t, s, []refusal{
		{"missing session", func() error { _, err := s.RecordUsage(ctx, kanban.UsageReport{SessionID: "missing"}); return err }, kanban.CodeNotFound},
		{"missing task", func() error { _, err := s.TaskUsage(ctx, "missing"); return err }, kanban.CodeNotFound},
		{"missing workspace", func() error { _, err := s.WorkspaceUsage(ctx, "missing"); return err }, kanban.CodeNotFound},
		{"bad limit", func() error {
			_, _, err := s.SessionUsage(ctx, f.s1.ID, kanban.Page{Limit: kanban.MaxLimit + 1})
			return err
		}, kanban.CodeValidation},
		{"bad cursor", func() error { _, _, err := s.SessionUsage(ctx, f.s1.ID, kanban.Page{Cursor: "x"}); return err }, kanban.CodeValidation},
	})
	if n := countRows(t, s, "session_usage"); n != 3 {
		t.Fatalf("got %d usage rows after refusals, want 3", n)
	}
}

// checkUsageClamped: absurd values are clamped, not stored as reported.
func checkUsageClamped(t *testing.T, f *usageFixture) {
	t.Helper()
	u := f.record(t, kanban.UsageReport{SessionID: f.s3.ID, AgentSessionID: "x", Tokens: kanban.Tokens{Input: -5, Output: 1 << 50},
		Cost: &kanban.Cost{Amount: 1e300, Currency: "usd"}, ContextUsed: -1, ContextSize: 1 << 40})
	if u.Input != 7 || u.Output != kanban.MaxTurnTokens || u.Cost.Amount != kanban.CostAmount(kanban.MaxTurnCostMicros) ||
		u.Cost.Currency != "" || u.ContextSize != kanban.MaxContextTokens || u.ContextUsed != 0 {
		t.Fatalf("clamped report: got %+v", u)
	}
	if u = f.record(t, kanban.UsageReport{SessionID: f.s3.ID, AgentSessionID: "x", Cost: &kanban.Cost{Amount: -1, Currency: "USD"}}); u.Turns != 3 ||
		u.Cost.Amount != kanban.CostAmount(kanban.MaxTurnCostMicros) {
		t.Fatalf("a negative cost changed the totals: %+v", u)
	}
}

// TestUsageTurnRowsBounded: a session keeps its newest MaxUsageTurnRows
// turn rows; the totals still count every turn.
func TestUsageTurnRowsBounded(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		s := newTestStore(t)
		b := newBoard(t, s, "bounded")
		sess, _, err := s.CreateSession(ctx, kanban.SessionCreate{TaskID: mustTask(t, s, b, "", "long").ID})
		if err != nil {
			t.Fatal(err)
		}
		n := kanban.MaxUsageTurnRows + 5
		var u *kanban.SessionUsage
		for i := range n {
			if u, err = s.RecordUsage(ctx, kanban.UsageReport{SessionID: sess.ID, Tokens: kanban.Tokens{Input: 2},
				Cost: &kanban.Cost{Amount: float64(i+1) * 0.01, Currency: "USD"}}); err != nil {
				t.Fatal(err)
			}
		}
		if rows := countRows(t, s, "session_usage_turns"); rows != kanban.MaxUsageTurnRows {
			t.Fatalf("got %d turn rows, want %d", rows, kanban.MaxUsageTurnRows)
		}
		if u.Turns != n || u.Input != int64(2*n) || fmt.Sprintf("%.2f", u.Cost.Amount) != fmt.Sprintf("%.2f", float64(n)*0.01) {
			t.Fatalf("totals %+v, want %d turns, %d input tokens, cost %.2f", u, n, 2*n, float64(n)*0.01)
		}
		_, turns, err := s.SessionUsage(ctx, sess.ID, kanban.Page{Limit: 1})
		if err != nil || turns.Items[0].Seq != n {
			t.Fatalf("newest turn %+v, %v", turns, err)
		}
	})
}

// TestUsageSumsUseIndexes: the task and workspace sums read the
// session_usage indexes, not the whole table (SQLite's planner).
func TestUsageSumsUseIndexes(t *testing.T) {
	s := newTestStore(t)
	for col, idx := range map[string]string{"task_id": "idx_session_usage_task", "workspace_id": "idx_session_usage_workspace"} {
		plan, err := s.explain(context.Background(), usageTotalsQuery(col+" = ?"), "x")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(plan, "\n"); !strings.Contains(got, idx) {
			t.Fatalf("sum by %s: plan %q, want it to use %s", col, got, idx)
		}
	}
}
