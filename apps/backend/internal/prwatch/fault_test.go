package prwatch

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestRateLimitBackoff: a primary rate limit pauses every poll on that
// forge client until the limit resets — the pull request that hit it
// counts a failure, another one on the same client is only deferred —
// and a secondary limit's Retry-After is honoured the same way.
func TestRateLimitBackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.gh.SetBranch(owner, repoName, "kandev/second", sha2)
	second, err := e.client.OpenPR(ctx, forge.Repo{Owner: owner, Name: repoName}, forge.NewPR{Title: "Second", Head: "kandev/second", Base: "main"})
	must(t, err)
	other, err := e.st.LinkPullRequest(ctx, kanban.PullRequest{TaskID: e.task.ID, RepositoryID: e.repo.ID, Forge: kanban.ForgeGitHub,
		ForgeRepo: owner + "/" + repoName, Number: second.Number, State: kanban.PROpen, HeadSHA: sha2})
	must(t, err)
	e.w.cfg.Concurrency = 1 // one poll at a time: the first meets the limit, the second waits for it
	e.w.polls, e.w.deliveries = make(chan struct{}, 1), make(chan struct{}, 1)

	reset := time.Now().Add(time.Hour)
	e.gh.LimitNext(forgetest.RateLimit{Reset: reset})
	e.steps(e.w, 2)
	first, deferred := e.record(), mustPR(t, e, other.ID)
	limited, waited := first, deferred
	if first.Watch.Failures == 0 {
		limited, waited = deferred, first
	}
	if limited.Watch.Failures != 1 || limited.Watch.NextPollAt.Before(reset.Add(-2*time.Second)) || !strings.Contains(limited.Automation.LastError, "rate limit") {
		t.Fatalf("the limited pull request: failures %d, next poll %v (reset %v), error %q", limited.Watch.Failures, limited.Watch.NextPollAt, reset, limited.Automation.LastError)
	}
	if waited.Watch.Failures != 0 || waited.Watch.NextPollAt.Before(reset.Add(-2*time.Second)) {
		t.Fatalf("the other pull request on the same forge: failures %d, next poll %v; want it deferred to the reset, not failed", waited.Watch.Failures, waited.Watch.NextPollAt)
	}
	before := len(e.gh.Requests())
	for _, id := range []string{e.pr.ID, other.ID} { // due again, by the record: still no call before the reset
		p := mustPR(t, e, id)
		p.Watch.NextPollAt = time.Now()
		_, err := e.st.RecordPoll(ctx, *p, nil)
		must(t, err)
	}
	e.steps(e.w, 2)
	if reqs := e.requestsSince(before); len(reqs) != 0 {
		t.Fatalf("called the forge during its rate limit: %+v", reqs)
	}

	// A secondary limit, on a fresh client.
	f := newEnv(t)
	f.gh.LimitNext(forgetest.RateLimit{Secondary: true, RetryAfter: 90 * time.Second})
	start := time.Now()
	f.steps(f.w, 1)
	p := f.record()
	if p.Watch.Failures != 1 || p.Watch.NextPollAt.Before(start.Add(89*time.Second)) {
		t.Fatalf("secondary limit: failures %d, next poll in %v; want at least 90 s", p.Watch.Failures, p.Watch.NextPollAt.Sub(start))
	}
}

func mustPR(t *testing.T, e *env, id string) *kanban.PullRequest {
	t.Helper()
	p, err := e.st.GetPullRequest(context.Background(), id)
	must(t, err)
	return p
}

// TestForgeErrorsBackOff: consecutive failures space the polls out
// (exponentially, from the backoff's base) and a success resets them.
func TestForgeErrorsBackOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var fail atomic.Bool
	fail.Store(true)
	broken := ForgesFunc(func(context.Context, kanban.PullRequest) (forge.Forge, error) {
		if fail.Load() {
			return nil, kanban.Errorf(kanban.CodeUnavailable, "no forge is configured for this repository")
		}
		return e.client, nil
	})
	w, err := New(Config{Store: e.st, Forges: broken, Sink: e.sink, Backend: "b", Interval: time.Nanosecond,
		Backoff: forge.Backoff{Base: 40 * time.Second, Max: time.Hour}})
	must(t, err)
	var delays []time.Duration
	for range 3 {
		p := e.record()
		p.Watch.NextPollAt = time.Now()
		_, err := e.st.RecordPoll(context.Background(), *p, nil)
		must(t, err)
		start := time.Now()
		w.step(t.Context())
		delays = append(delays, e.record().Watch.NextPollAt.Sub(start))
	}
	if p := e.record(); p.Watch.Failures != 3 || p.Automation.LastError != "no forge is configured for this repository" {
		t.Fatalf("after 3 failures: %+v", p.Watch)
	}
	// Jitter keeps each delay between half and all of its step: 40, 80, 160 s.
	for i, d := range delays {
		lo := 20 * time.Second << i
		if d < lo-time.Second || d > 2*lo+time.Second {
			t.Fatalf("delay %d: %v, want between %v and %v (all: %v)", i+1, d, lo, 2*lo, delays)
		}
	}
	fail.Store(false)
	p := e.record()
	p.Watch.NextPollAt = time.Now()
	_, err = e.st.RecordPoll(context.Background(), *p, nil)
	must(t, err)
	w.step(t.Context())
	if p := e.record(); p.Watch.Failures != 0 || p.Automation.LastError != "" || p.Watch.LastPolledAt == nil {
		t.Fatalf("after a success: %+v, error %q", p.Watch, p.Automation.LastError)
	}
}

// TestInterruptedNotRedone: events a backend claimed and died while
// acting on are interrupted by the next start and never delivered; the
// ones it had not claimed are.
func TestInterruptedNotRedone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.st.AddPREvents(ctx, e.pr.ID, []kanban.PREvent{entry(ReviewCommented, "comment:1", payload{})}, false)
	must(t, err)
	claimed, err := e.st.ClaimPREvents(ctx, "dead-backend", time.Now(), 10)
	must(t, err)
	if len(claimed) != 1 {
		t.Fatalf("claimed %d", len(claimed))
	}
	_, err = e.st.AddPREvents(ctx, e.pr.ID, []kanban.PREvent{entry(ReviewCommented, "comment:2", payload{})}, false)
	must(t, err)
	e.steps(e.w, 2)
	if j := e.journal(); j != "comment:1=interrupted comment:2=delivered" {
		t.Fatalf("journal %q", j)
	}
	if got := e.sink.of(ReviewCommented); len(got) != 1 {
		t.Fatalf("delivered %d comment events, want only the unclaimed one", len(got))
	}
}

// TestSinkFailureRetried: a delivery that fails is retried after the
// backoff, later events of the pull request waiting for it; after
// MaxAttempts it is given up and its error shown; a success clears it.
func TestSinkFailureRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var calls atomic.Int32
	e.sink.fail = func(Event) error {
		if calls.Add(1) <= 2 { // the pull request's first event, twice
			return kanban.Errorf(kanban.CodeUnavailable, "the task has no session to prompt")
		}
		return nil
	}
	now := time.Now().UTC().Truncate(time.Second)
	e.gh.AddReviewComment(owner, repoName, e.pr.Number, forgetest.ReviewComment{User: "bob", Body: "one", Path: "a.go", Line: 1, Side: "RIGHT", CommitID: sha1, CreatedAt: now})
	e.gh.AddReview(owner, repoName, e.pr.Number, forgetest.Review{User: "bob", State: "COMMENTED", Body: "two", CommitID: sha1, SubmittedAt: now})
	e.steps(e.w, 1)
	if p := e.record(); p.Automation.LastError != "the task has no session to prompt" {
		t.Fatalf("last error %q", p.Automation.LastError)
	}
	if k := e.sink.kinds(); k != "" {
		t.Fatalf("delivered %q while the first event waits for its retry", k)
	}
	for range 20 {
		e.steps(e.w, 1)
		if len(e.sink.got()) == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if k := e.sink.kinds(); k != "review_submitted review_comment" { // in the order seen
		t.Fatalf("delivered %q", k)
	}
	if p := e.record(); p.Automation.LastError != "" {
		t.Fatalf("a later success left the error %q", p.Automation.LastError)
	}

	// Given up after MaxAttempts.
	f := newEnv(t)
	f.w.cfg.MaxAttempts = 2
	f.sink.fail = func(Event) error { return errors.New("internal detail that must not be shown") }
	f.gh.AddReviewComment(owner, repoName, f.pr.Number, forgetest.ReviewComment{User: "bob", Body: "x", Path: "a.go", Line: 1, Side: "RIGHT", CommitID: sha1, CreatedAt: now})
	for range 20 {
		f.steps(f.w, 1)
		if strings.Contains(f.journal(), "=failed") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if j := f.journal(); !strings.HasSuffix(j, "=failed") {
		t.Fatalf("journal %q", j)
	}
	if p := f.record(); p.Automation.LastError != "the review_comment event could not be delivered" {
		t.Fatalf("last error %q", p.Automation.LastError)
	}
}

// TestReviewRequestedAndClosed: the first observation of requested
// reviewers is the baseline (no prompt); a reviewer requested later is
// one event with the lifecycle prompt; with a reviewer login set, only its
// requests count. A close is one event with its prompt, and polling stops.
func TestReviewRequestedAndClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	login := "carol"
	e.set(kanban.PRAutomationUpdate{PromptOnReviewRequested: &on, PromptOnClosed: &on, ReviewReviewerLogin: &login})
	e.gh.UpdatePR(owner, repoName, e.pr.Number, func(p *forgetest.PullRequest) { p.RequestedReviewers = []string{"carol"} })
	e.steps(e.w, 2)
	if got := e.sink.of(ReviewRequested); len(got) != 0 {
		t.Fatalf("the baseline was reported: %+v", got)
	}
	if p := e.record(); p.Review != kanban.ReviewPending || len(p.Watch.RequestedReviewers) != 1 {
		t.Fatalf("record %+v", p)
	}
	e.gh.UpdatePR(owner, repoName, e.pr.Number, func(p *forgetest.PullRequest) { p.RequestedReviewers = []string{"carol", "dave"} })
	e.steps(e.w, 2)
	if got := e.sink.of(ReviewRequested); len(got) != 0 {
		t.Fatalf("a request of another reviewer than %s was reported: %+v", login, got)
	}
	e.gh.UpdatePR(owner, repoName, e.pr.Number, func(p *forgetest.PullRequest) { p.RequestedReviewers = []string{"dave"} })
	e.steps(e.w, 1)
	e.gh.UpdatePR(owner, repoName, e.pr.Number, func(p *forgetest.PullRequest) { p.RequestedReviewers = []string{"dave", "carol"} })
	e.steps(e.w, 2)
	got := e.sink.of(ReviewRequested)
	if len(got) != 1 || got[0].Reviewer != "carol" || got[0].Prompt == nil || got[0].Prompt.Reason != ReasonReviewRequested ||
		got[0].Prompt.Text != "A review was requested on the pull request "+e.pr.URL+"." {
		t.Fatalf("review requested events %+v", got)
	}

	e.gh.UpdatePR(owner, repoName, e.pr.Number, func(p *forgetest.PullRequest) { p.Closed = true })
	e.steps(e.w, 2)
	closed := e.sink.of(Closed)
	if len(closed) != 1 || closed[0].Prompt == nil || closed[0].Prompt.Text != "The pull request "+e.pr.URL+" was closed without merging." {
		t.Fatalf("closed events %+v", closed)
	}
	if p := e.record(); p.State != kanban.PRClosed {
		t.Fatalf("state %s", p.State)
	}
	before := len(e.gh.Requests())
	e.steps(e.w, 2)
	if n := len(e.requestsSince(before)); n != 0 {
		t.Fatalf("a closed pull request is still polled (%d requests)", n)
	}
}

// TestRunStopsWithItsContext: Run returns soon after its context ends,
// also while a poll waits on a forge that does not answer.
func TestRunStopsWithItsContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	entered := make(chan struct{}, 1)
	hang := ForgesFunc(func(ctx context.Context, _ kanban.PullRequest) (forge.Forge, error) {
		entered <- struct{}{}
		<-ctx.Done() // a forge that never answers: only the context ends the wait
		return nil, ctx.Err()
	})
	w, err := New(Config{Store: e.st, Forges: hang, Sink: e.sink, Backend: "b", Interval: time.Nanosecond})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher never polled")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// flakyReviews fails its forge's Reviews calls while fail is set.
type flakyReviews struct {
	forge.Forge
	fail atomic.Bool
}

func (f *flakyReviews) Reviews(ctx context.Context, repo forge.Repo, n int, since time.Time) (*forge.Reviews, error) {
	if f.fail.Load() {
		return nil, kanban.Errorf(kanban.CodeUnavailable, "the forge failed (HTTP 502); retry later")
	}
	return f.Forge.Reviews(ctx, repo, n, since)
}

// TestHalfFailedPollReadAgain: a poll that read a change and then failed
// records nothing of it; the next poll reads the change again (its reads
// are conditional on what was recorded, not on what the client last saw)
// and records it.
func TestHalfFailedPollReadAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	flaky := &flakyReviews{Forge: e.client}
	w := e.watcher(e.st, flaky, e.sink, "backend-1")
	e.steps(w, 1)
	e.gh.UpdatePR(owner, repoName, e.pr.Number, func(p *forgetest.PullRequest) { p.Title = "Add the login form (v2)"; p.Draft = true })
	flaky.fail.Store(true)
	e.steps(w, 1)
	if p := e.record(); p.Watch.Failures != 1 || p.Title == "Add the login form (v2)" {
		t.Fatalf("after the half-failed poll: failures %d, title %q", p.Watch.Failures, p.Title)
	}
	flaky.fail.Store(false)
	p := e.record()
	p.Watch.NextPollAt = time.Now()
	_, err := e.st.RecordPoll(context.Background(), *p, nil)
	must(t, err)
	e.steps(w, 1)
	if p := e.record(); p.Watch.Failures != 0 || p.Title != "Add the login form (v2)" || p.State != kanban.PRDraft {
		t.Fatalf("the next poll: failures %d, title %q, state %s; want the change the failed poll had read", p.Watch.Failures, p.Title, p.State)
	}
}
