package store

import (
	"context"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBudgets: bad budgets are refused and write nothing; usage recorded
// concurrently by several sessions fires each threshold of each covering
// budget exactly once; a spent budget is reported until its limit is
// raised, which starts a revision whose alerts fire anew; a deleted
// task's budget goes with it.
func TestBudgets(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		f := newUsageFixture(t)
		checkBudgetRefusals(t, f)
		ws, err := f.s.SetBudget(ctx, kanban.BudgetSet{Scope: kanban.BudgetWorkspace, ScopeID: f.task.WorkspaceID,
			TokenLimit: 1000, Thresholds: []int{80, 50, 80}})
		if err != nil {
			t.Fatal(err)
		}
		if ws.Revision != 1 || len(ws.Thresholds) != 2 || ws.Thresholds[0] != 50 || ws.Spent.Tokens != 0 {
			t.Fatalf("workspace budget = %+v", ws)
		}
		task, err := f.s.SetBudget(ctx, kanban.BudgetSet{Scope: kanban.BudgetTask, ScopeID: f.task.ID,
			CostLimit: usd(1)})
		if err != nil {
			t.Fatal(err)
		}
		if len(task.Thresholds) != 1 || task.Thresholds[0] != kanban.DefaultBudgetThreshold {
			t.Fatalf("default thresholds = %v", task.Thresholds)
		}
		// 3 sessions × 10 turns × 40 tokens = 1200 tokens (120 %).
		alerts := recordConcurrently(t, f, []*kanban.Session{f.s1, f.s2, f.s3}, 10, 40)
		fired := map[[2]any]int{}
		for _, a := range alerts {
			fired[[2]any{a.Scope, a.Threshold}]++
		}
		if len(alerts) != 2 || fired[[2]any{kanban.BudgetWorkspace, 50}] != 1 || fired[[2]any{kanban.BudgetWorkspace, 80}] != 1 {
			t.Fatalf("alerts = %+v", alerts)
		}
		spent, err := f.s.SpentBudget(ctx, f.s3.ID)
		if err != nil || spent == nil || spent.Scope != kanban.BudgetWorkspace || spent.Spent.Tokens != 1200 || spent.Spent.Percent != 120 {
			t.Fatalf("spent = %+v, %v", spent, err)
		}
		e := kanban.BudgetExceededError(spent)
		if e.Code != kanban.CodeBudgetExceeded {
			t.Fatalf("refusal = %v", e)
		}
		// Raised: nothing spent, a new revision; crossing 50 % of it fires again.
		if ws, err = f.s.SetBudget(ctx, kanban.BudgetSet{Scope: kanban.BudgetWorkspace, ScopeID: f.task.WorkspaceID,
			TokenLimit: 2000, Thresholds: []int{50, 80}}); err != nil || ws.Revision != 2 || ws.Spent.Percent != 60 {
			t.Fatalf("raised = %+v, %v", ws, err)
		}
		if spent, err := f.s.SpentBudget(ctx, f.s3.ID); err != nil || spent != nil {
			t.Fatalf("spent after raising = %+v, %v", spent, err)
		}
		u := f.record(t, kanban.UsageReport{SessionID: f.s3.ID, Tokens: kanban.Tokens{Input: 1}})
		if len(u.Alerts) != 1 || u.Alerts[0].Threshold != 50 || u.Alerts[0].Revision != 2 {
			t.Fatalf("alerts of revision 2 = %+v", u.Alerts)
		}
		// The task budget counts only its sessions' cost in its currency.
		f.record(t, kanban.UsageReport{SessionID: f.s1.ID, AgentSessionID: "a", Cost: usd(0.9)})
		if got, err := f.s.GetBudget(ctx, kanban.BudgetTask, f.task.ID); err != nil || got.Spent.Percent != 90 {
			t.Fatalf("task budget = %+v, %v", got, err)
		}
		checkBudgetPagesAndDelete(t, f)
	})
}

func checkBudgetRefusals(t *testing.T, f *usageFixture) {
	t.Helper()
	ctx := context.Background()
	for _, in := range []kanban.BudgetSet{
		{Scope: "team", ScopeID: f.task.ID, TokenLimit: 1},
		{Scope: kanban.BudgetTask, ScopeID: f.task.ID},
		{Scope: kanban.BudgetTask, ScopeID: f.task.ID, TokenLimit: -1},
		{Scope: kanban.BudgetTask, ScopeID: f.task.ID, TokenLimit: 1, Thresholds: []int{0}},
		{Scope: kanban.BudgetTask, ScopeID: f.task.ID, TokenLimit: 1, Thresholds: []int{1, 2, 3, 4, 5, 6}},
		{Scope: kanban.BudgetTask, ScopeID: f.task.ID, CostLimit: &kanban.Cost{Amount: 1, Currency: "usd"}},
	} {
		if _, err := f.s.SetBudget(ctx, in); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Fatalf("set %+v: %v, want VALIDATION_ERROR", in, err)
		}
	}
	if _, err := f.s.SetBudget(ctx, kanban.BudgetSet{Scope: kanban.BudgetAgentProfile, ScopeID: "nope", TokenLimit: 1}); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Fatalf("missing profile: %v", err)
	}
	if l, err := f.s.ListBudgets(ctx, kanban.BudgetFilter{}, kanban.Page{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("after refusals = %+v, %v", l, err)
	}
}

// recordConcurrently records turns of tokens input tokens for each
// session, all at once, and returns every alert fired.
func recordConcurrently(t *testing.T, f *usageFixture, sessions []*kanban.Session, turns int, tokens int64) []kanban.BudgetAlert {
	t.Helper()
	var (
		mu  sync.Mutex
		out []kanban.BudgetAlert
		wg  sync.WaitGroup
	)
	errs := make(chan error, len(sessions)*turns)
	for _, sess := range sessions {
		for range turns {
			wg.Go(func() {
				u, err := f.s.RecordUsage(context.Background(), kanban.UsageReport{SessionID: sess.ID, Tokens: kanban.Tokens{Input: tokens}})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				out = append(out, u.Alerts...)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

// TestBudgetAgentProfile: an agent profile's budget counts the sessions
// run with the profile, in any task, and no other.
func TestBudgetAgentProfile(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		s := newTestStore(t)
		if err := action.Seed(ctx, s); err != nil {
			t.Fatal(err)
		}
		b := newBoard(t, s, "Profiles")
		def := must(s.DefaultAgentProfile(ctx))(t)
		prof := must(s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: def.AgentID, Name: "budgeted"}))(t)
		session := func(title, profile string) *kanban.Session {
			sess, _, err := s.CreateSession(ctx, kanban.SessionCreate{TaskID: mustTask(t, s, b, "", title).ID, AgentProfileID: profile})
			if err != nil {
				t.Fatal(err)
			}
			return sess
		}
		s1, s2, other := session("one", prof.ID), session("two", prof.ID), session("other", def.ID)
		if _, err := s.SetBudget(ctx, kanban.BudgetSet{Scope: kanban.BudgetAgentProfile, ScopeID: prof.ID, TokenLimit: 100,
			Thresholds: []int{50}}); err != nil {
			t.Fatal(err)
		}
		record := func(sess *kanban.Session, n int64) []kanban.BudgetAlert {
			u, err := s.RecordUsage(ctx, kanban.UsageReport{SessionID: sess.ID, Tokens: kanban.Tokens{Output: n}})
			if err != nil {
				t.Fatal(err)
			}
			return u.Alerts
		}
		if a := append(record(s1, 30), record(other, 40)...); len(a) != 0 {
			t.Fatalf("alerts at 30%% = %+v", a)
		}
		if a := record(s2, 30); len(a) != 1 || a[0].Scope != kanban.BudgetAgentProfile || a[0].Percent != 60 || a[0].SessionID != s2.ID {
			t.Fatalf("alerts at 60%% = %+v", a)
		}
		record(s1, 40)
		if spent, err := s.SpentBudget(ctx, s2.ID); err != nil || spent == nil || spent.Spent.Tokens != 100 {
			t.Fatalf("spent = %+v, %v", spent, err)
		}
		if spent, err := s.SpentBudget(ctx, other.ID); err != nil || spent != nil {
			t.Fatalf("another profile's session: %+v, %v", spent, err)
		}
	})
}

// checkBudgetPagesAndDelete: the two budgets list one a page; deleting
// the task deletes its budget.
func checkBudgetPagesAndDelete(t *testing.T, f *usageFixture) {
	t.Helper()
	ctx := context.Background()
	l, err := f.s.ListBudgets(ctx, kanban.BudgetFilter{}, kanban.Page{Limit: 1})
	if err != nil || len(l.Items) != 1 || l.NextCursor == "" {
		t.Fatalf("page 1 = %+v, %v", l, err)
	}
	l2, err := f.s.ListBudgets(ctx, kanban.BudgetFilter{}, kanban.Page{Limit: 1, Cursor: l.NextCursor})
	if err != nil || len(l2.Items) != 1 || l2.Items[0].Scope == l.Items[0].Scope {
		t.Fatalf("page 2 = %+v, %v", l2, err)
	}
	// Deleting the task deletes its budget.
	if err := f.s.DeleteTask(ctx, f.task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.GetBudget(ctx, kanban.BudgetTask, f.task.ID); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Fatalf("budget of a deleted task: %v", err)
	}
}
