package prwatch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// TestTwoBackendsOnce: two backends on one PostgreSQL database, each with
// its own forge client (cold caches) and sink, watching the same pull
// request at once: a failing head gets one auto-fix prompt, a comment one
// event, green and approved one merge — in all, across both.
func TestTwoBackendsOnce(t *testing.T) {
	t.Parallel()
	u := pgtest.Database(t)
	ctx := context.Background()
	open := func() *store.Store {
		st, err := store.OpenPostgres(ctx, u)
		must(t, err)
		return st
	}
	e := newEnvOn(t, open())
	other := open()
	t.Cleanup(func() { _ = other.Close() })
	for _, id := range []string{"backend-a", "backend-b"} { // both alive: neither interrupts the other's events
		must(t, e.st.Heartbeat(ctx, id, "", time.Now().Add(time.Hour)))
	}
	e.set(kanban.PRAutomationUpdate{AutoFixEnabled: &on, AutoMergeEnabled: &on})
	now := time.Now().UTC().Truncate(time.Second)
	e.gh.SetChecks(owner, repoName, sha1, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "failure", Summary: "exit 1"})
	e.gh.AddReviewComment(owner, repoName, e.pr.Number, forgetest.ReviewComment{User: "bob", Body: "Why?", Path: "a.go", Line: 3, Side: "RIGHT", CommitID: sha1, CreatedAt: now})

	sinkA, sinkB := &recorder{}, &recorder{}
	a := e.watcher(e.st, newClient(t, e.gh), sinkA, "backend-a")
	b := e.watcher(other, newClient(t, e.gh), sinkB, "backend-b")
	race := func(rounds int) {
		var wg sync.WaitGroup
		for _, w := range []*Watcher{a, b} {
			wg.Go(func() {
				for range rounds {
					w.step(t.Context())
				}
			})
		}
		wg.Wait()
	}
	race(4)
	// The agent pushes a fix: green, then approved.
	e.gh.UpdatePR(owner, repoName, e.pr.Number, func(p *forgetest.PullRequest) { p.HeadSHA = sha2 })
	e.gh.SetChecks(owner, repoName, sha2, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
	e.gh.AddReview(owner, repoName, e.pr.Number, forgetest.Review{User: "alice", State: "APPROVED", CommitID: sha2, SubmittedAt: now.Add(time.Minute)})
	race(6)

	count := func(k Kind) int { return len(sinkA.of(k)) + len(sinkB.of(k)) }
	if n := count(ChecksFailing); n != 1 {
		t.Fatalf("got %d failing-check events across the backends, want 1 (a: %s; b: %s)", n, sinkA.kinds(), sinkB.kinds())
	}
	prompts := 0
	for _, ev := range append(sinkA.of(ChecksFailing), sinkB.of(ChecksFailing)...) {
		if ev.Prompt != nil {
			prompts++
		}
	}
	if prompts != 1 || count(ReviewCommented) != 1 || count(ReviewSubmitted) != 1 || count(Merged) != 1 {
		t.Fatalf("prompts %d, comments %d, reviews %d, merged %d; want 1 each (a: %s; b: %s)", prompts, count(ReviewCommented),
			count(ReviewSubmitted), count(Merged), sinkA.kinds(), sinkB.kinds())
	}
	if n := merges(e.gh); n != 1 {
		t.Fatalf("got %d merge calls across the backends, want 1", n)
	}
	if p := e.record(); p.Automation.AutoFixRounds != 1 || p.State != kanban.PRMerged {
		t.Fatalf("record: rounds %d, state %s", p.Automation.AutoFixRounds, p.State)
	}
}
