package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
)

// TestPRAutomation: the reference's GET shape (defaults, aggregates, the
// per-PR entries), updates fanned out or aimed at one pull request, the
// task-wide override, refusals that write nothing, and re-enabling
// auto-fix starting its rounds over.
func TestPRAutomation(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t)
		ctx := context.Background()
		f := newPRFixture(t, s)
		empty := must(s.PRAutomation(ctx, f.task.ID, kanban.ForgeGitHub))(t)
		if empty.AutoFixEnabled || empty.UpdatedAt != nil || empty.AutoFixPromptOverride != nil || !empty.UsingDefaultPrompt ||
			empty.EffectiveAutoFixPrompt != kanban.DefaultAutoFixPrompt || empty.AutoFixMaxRounds != kanban.MaxAutoFixRounds ||
			len(empty.PROptions) != 0 || empty.PRStates == nil {
			t.Fatalf("no pull request: %+v", empty)
		}
		one := must(s.LinkPullRequest(ctx, f.pr(1)))(t)
		must(s.LinkPullRequest(ctx, f.pr(2)))(t)
		mr := f.pr(3)
		mr.Forge, mr.ForgeRepo = kanban.ForgeGitLab, "group/sub/app"
		must(s.LinkPullRequest(ctx, mr))(t)

		// Fanned out to every GitHub pull request of the task.
		on, off := true, false
		got := must(s.UpdatePRAutomation(ctx, f.task.ID, kanban.ForgeGitHub, kanban.PRAutomationUpdate{AutoFixEnabled: &on, PromptOnMerged: &on}))(t)
		if !got.AutoFixEnabled || !got.PromptOnMerged || got.AutoMergeEnabled || len(got.PROptions) != 2 || len(got.PRStates) != 2 || got.UpdatedAt == nil {
			t.Fatalf("fanned out: %+v", got)
		}
		if gl := must(s.PRAutomation(ctx, f.task.ID, kanban.ForgeGitLab))(t); len(gl.PROptions) != 1 || gl.PROptions[0].AutoFixEnabled {
			t.Fatalf("the GitLab merge request changed with the GitHub switches: %+v", gl.PROptions)
		}
		// Aimed at one: the aggregate is true only when every PR has it.
		repo, n := f.repo.ID, 2
		got = must(s.UpdatePRAutomation(ctx, f.task.ID, kanban.ForgeGitHub, kanban.PRAutomationUpdate{RepositoryID: &repo, PRNumber: &n,
			AutoFixEnabled: &off, AutoMergeEnabled: &on}))(t)
		if got.AutoFixEnabled || got.AutoMergeEnabled || !got.PROptions[0].AutoFixEnabled || got.PROptions[1].AutoFixEnabled || !got.PROptions[1].AutoMergeEnabled {
			t.Fatalf("aimed at #2: %+v", got.PROptions)
		}
		// The override is task-wide; "" clears it.
		prompt := "Fix CI.\n" + kanban.AutoFixFeedback
		got = must(s.UpdatePRAutomation(ctx, f.task.ID, kanban.ForgeGitHub, kanban.PRAutomationUpdate{AutoFixPromptOverride: &prompt}))(t)
		if got.AutoFixPromptOverride == nil || *got.AutoFixPromptOverride != prompt || got.EffectiveAutoFixPrompt != prompt || got.UsingDefaultPrompt {
			t.Fatalf("override: %+v", got)
		}
		none := ""
		got = must(s.UpdatePRAutomation(ctx, f.task.ID, kanban.ForgeGitHub, kanban.PRAutomationUpdate{AutoFixPromptOverride: &none}))(t)
		if got.AutoFixPromptOverride != nil || !got.UsingDefaultPrompt {
			t.Fatalf("cleared override: %+v", got)
		}

		checkPRAutomationRefusals(t, s, f, prompt)
		checkAutoFixStartsOver(t, s, f, one)
	})
}

// checkPRAutomationRefusals checks that refused updates write nothing.
func checkPRAutomationRefusals(t *testing.T, s *Store, f prFixture, prompt string) {
	t.Helper()
	ctx := context.Background()
	on, repo, n := true, f.repo.ID, 2
	before := dump(t, s, []string{"task_pull_requests", "task_pr_automation"})
	missing, huge := 99, string(make([]byte, kanban.MaxPromptLen+1))
	for _, c := range []struct {
		name string
		u    kanban.PRAutomationUpdate
	}{
		{"repository without number", kanban.PRAutomationUpdate{RepositoryID: &repo, AutoFixEnabled: &on}},
		{"number without repository", kanban.PRAutomationUpdate{PRNumber: &n, AutoFixEnabled: &on}},
		{"a pull request not linked", kanban.PRAutomationUpdate{RepositoryID: &repo, PRNumber: &missing, AutoFixEnabled: &on, AutoFixPromptOverride: &prompt}},
		{"an override too long", kanban.PRAutomationUpdate{AutoFixPromptOverride: &huge, AutoFixEnabled: &on}},
	} {
		if _, err := s.UpdatePRAutomation(ctx, f.task.ID, kanban.ForgeGitHub, c.u); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Errorf("%s: got %v, want VALIDATION_ERROR", c.name, err)
		}
	}
	if _, err := s.UpdatePRAutomation(ctx, kanban.NewID(), kanban.ForgeGitHub, kanban.PRAutomationUpdate{AutoFixEnabled: &on}); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Errorf("missing task: %v", err)
	}
	if diff := cmpDump(before, dump(t, s, []string{"task_pull_requests", "task_pr_automation"})); diff != "" {
		t.Fatalf("a refused update wrote:\n%s", diff)
	}
}

// checkAutoFixStartsOver: with the rounds spent, turning auto-fix off
// and on again starts over, and a poll claimed before the change can no
// longer record.
func checkAutoFixStartsOver(t *testing.T, s *Store, f prFixture, one *kanban.PullRequest) {
	t.Helper()
	ctx := context.Background()
	on, off := true, false
	p := must(s.GetPullRequest(ctx, one.ID))(t)
	now := time.Now()
	p.Automation.AutoFixRounds, p.Automation.AutoFixExhaustedAt, p.Watch.NextPollAt = kanban.MaxAutoFixRounds, &now, now
	must(s.RecordPoll(ctx, *p, nil))(t)
	p = must(s.GetPullRequest(ctx, one.ID))(t)
	repo1, n1 := f.repo.ID, 1
	must(s.UpdatePRAutomation(ctx, f.task.ID, kanban.ForgeGitHub, kanban.PRAutomationUpdate{RepositoryID: &repo1, PRNumber: &n1, AutoFixEnabled: &on}))(t)
	if kept := must(s.GetPullRequest(ctx, one.ID))(t); kept.Automation.AutoFixRounds != kanban.MaxAutoFixRounds {
		t.Fatalf("setting auto-fix on while on reset the rounds: %+v", kept.Automation)
	}
	must(s.UpdatePRAutomation(ctx, f.task.ID, kanban.ForgeGitHub, kanban.PRAutomationUpdate{RepositoryID: &repo1, PRNumber: &n1, AutoFixEnabled: &off}))(t)
	got := must(s.UpdatePRAutomation(ctx, f.task.ID, kanban.ForgeGitHub, kanban.PRAutomationUpdate{RepositoryID: &repo1, PRNumber: &n1, AutoFixEnabled: &on}))(t)
	if st := got.PRStates[0]; st.AutoFixRounds != 0 || st.AutoFixExhaustedAt != nil || st.LastFixAt != nil {
		t.Fatalf("re-enabled: %+v", st)
	}
	if _, err := s.RecordPoll(ctx, *p, nil); kanban.ErrorCode(err) != kanban.CodeConflict {
		t.Fatalf("a poll claimed before the switch changed: got %v, want CONFLICT", err)
	}
}

func cmpDump(a, b map[string][]string) string {
	for k, rows := range a {
		if len(rows) != len(b[k]) {
			return k + ": row count changed"
		}
		for i := range rows {
			if rows[i] != b[k][i] {
				return k + ": " + rows[i] + "\n→ " + b[k][i]
			}
		}
	}
	return ""
}

// TestClaimDueAcrossBackends: two backends on one PostgreSQL database
// claiming due pull requests at once claim each exactly once.
func TestClaimDueAcrossBackends(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	ctx := context.Background()
	a, b := openShared(t, u), openShared(t, u)
	f := newPRFixture(t, a)
	const n = 40
	for i := range n {
		must(a.LinkPullRequest(ctx, f.pr(i+1)))(t)
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	now := time.Now().Add(time.Second)
	for w := range 6 {
		st := []*Store{a, b}[w%2]
		wg.Go(func() {
			for {
				got, err := st.ClaimDuePullRequests(ctx, now, time.Hour, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, p := range got {
					seen[p.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("claimed %d pull requests, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("pull request %s claimed %d times", id, c)
		}
	}
}
