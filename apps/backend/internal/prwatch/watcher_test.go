package prwatch

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// failingLog is an Actions job's log: long, coloured, timestamped, with
// the token in it, ending on the failure.
func failingLog() string {
	var b strings.Builder
	for i := range 3000 {
		b.WriteString("2026-12-01T10:00:00.1234567Z \x1b[36mok step output\x1b[0m " + strings.Repeat("x", i%50) + "\n")
	}
	b.WriteString("2026-12-01T10:00:01.0000000Z --- FAIL: TestLogin (0.01s)\n")
	b.WriteString("2026-12-01T10:00:01.0000000Z login_test.go:42: got 500, want 200 (token " + apiToken + ")\n")
	b.WriteString("2026-12-01T10:00:01.0000000Z ##[error]Process completed with exit code 1.\n")
	return b.String()
}

// TestFailingCheckAutoFixOnce: checks still running are waited for; once
// they finish with a failure, exactly one auto-fix prompt is sent, with
// the failing check's name and the end of its log (bounded, cleaned, the
// token redacted); polling on finds nothing new.
func TestFailingCheckAutoFixOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.set(kanban.PRAutomationUpdate{AutoFixEnabled: &on})
	runs := e.gh.SetChecks(owner, repoName, sha1,
		forgetest.CheckRun{Name: "test (ubuntu)", Status: "completed", Conclusion: "failure", AppSlug: "github-actions", Title: "1 test failed"},
		forgetest.CheckRun{Name: "lint", Status: "in_progress"})
	e.gh.SetJobLog(runs[0].ID, failingLog())
	e.steps(e.w, 2)
	if got := e.sink.of(ChecksFailing); len(got) != 0 {
		t.Fatalf("reported failing checks while one still runs: %+v", got)
	}
	if p := e.record(); p.Checks != kanban.ChecksFailing || p.Automation.AutoFixRounds != 0 {
		t.Fatalf("record while pending: checks %s, rounds %d", p.Checks, p.Automation.AutoFixRounds)
	}

	e.gh.SetChecks(owner, repoName, sha1,
		forgetest.CheckRun{ID: runs[0].ID, Name: "test (ubuntu)", Status: "completed", Conclusion: "failure", AppSlug: "github-actions", Title: "1 test failed"},
		forgetest.CheckRun{Name: "lint", Status: "completed", Conclusion: "failure"})
	e.steps(e.w, 4)
	got := e.sink.of(ChecksFailing)
	if len(got) != 1 {
		t.Fatalf("got %d failing-check events (%s), want 1", len(got), e.sink.kinds())
	}
	ev := got[0]
	c, p := ev.Check, ev.Prompt
	if c == nil || c.Name != "test (ubuntu)" || c.ID != runs[0].ID || !c.Truncated || len(c.Excerpt) > kanban.MaxAutoFixExcerpt ||
		!strings.Contains(c.Excerpt, "--- FAIL: TestLogin") || len(c.Failing) != 1 || c.Failing[0] != "lint" || ev.HeadSHA != sha1 {
		t.Fatalf("check %+v", c)
	}
	if p == nil || p.Reason != ReasonAutoFix || !strings.Contains(p.Text, "Failing check: test (ubuntu) (failure)") ||
		!strings.Contains(p.Text, "##[error]Process completed with exit code 1.") || !strings.Contains(p.Text, "Also failing: lint") ||
		strings.Contains(p.Text, kanban.AutoFixFeedback) || len(p.Text) > kanban.MaxPromptLen {
		t.Fatalf("prompt %+v", p)
	}
	for _, bad := range []string{apiToken, "\x1b", "2026-12-01T"} {
		if strings.Contains(p.Text, bad) {
			t.Fatalf("the prompt carries %q", bad)
		}
	}
	if rec := e.record(); rec.Automation.AutoFixRounds != 1 || rec.Automation.LastFixAt == nil || rec.Watch.LastCheckID != runs[0].ID {
		t.Fatalf("automation state %+v, watch %+v", rec.Automation, rec.Watch)
	}
	if j := e.journal(); j != "checks_failing:"+sha1+"=delivered" {
		t.Fatalf("journal %q", j)
	}
	// The failed job is re-run and fails again on the same head: the
	// checks changed, the result did not; nothing more is sent.
	e.gh.SetChecks(owner, repoName, sha1,
		forgetest.CheckRun{ID: runs[0].ID, Name: "test (ubuntu)", Status: "completed", Conclusion: "failure", AppSlug: "github-actions", Title: "1 test failed (re-run)"},
		forgetest.CheckRun{Name: "lint", Status: "completed", Conclusion: "failure"})
	e.steps(e.w, 3)
	if n, rounds := len(e.sink.of(ChecksFailing)), e.record().Automation.AutoFixRounds; n != 1 || rounds != 1 {
		t.Fatalf("after a re-run failing again: %d failing-check events, %d rounds; want 1 and 1", n, rounds)
	}
}

// TestAutoFixRoundsAndOverride: each new head that fails gets its prompt,
// from the task's override, until the rounds are spent; then the
// automation pauses (the failure is still reported, without a prompt).
func TestAutoFixRoundsAndOverride(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	override := "Fix CI please.\n" + kanban.AutoFixFeedback
	e.set(kanban.PRAutomationUpdate{AutoFixEnabled: &on, AutoFixPromptOverride: &override})
	// Rounds spent but one, by earlier polls.
	p := e.record()
	p.Automation.AutoFixRounds = kanban.MaxAutoFixRounds - 1
	if _, err := e.st.RecordPoll(context.Background(), *p, nil); err != nil {
		t.Fatal(err)
	}
	for _, head := range []string{sha1, sha2} {
		e.gh.UpdatePR(owner, repoName, e.pr.Number, func(p *forgetest.PullRequest) { p.HeadSHA = head })
		e.gh.SetChecks(owner, repoName, head, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "failure", Summary: "exit 2"})
		e.steps(e.w, 2)
	}
	got := e.sink.of(ChecksFailing)
	if len(got) != 2 || got[0].Prompt == nil || !strings.HasPrefix(got[0].Prompt.Text, "Fix CI please.\n") ||
		!strings.Contains(got[0].Prompt.Text, "exit 2") || got[1].Prompt != nil || got[1].HeadSHA != sha2 {
		t.Fatalf("events %+v", got)
	}
	if a := e.record().Automation; a.AutoFixRounds != kanban.MaxAutoFixRounds || a.AutoFixExhaustedAt == nil {
		t.Fatalf("automation %+v, want the rounds spent and the automation paused", a)
	}
}

// TestAutoMergeOnce: green, approved and mergeable with auto-merge on →
// one merge call, of the head that was checked, with the configured
// method; the merge is then seen (merged event, lifecycle prompt) and
// polling stops.
func TestAutoMergeOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.set(kanban.PRAutomationUpdate{AutoMergeEnabled: &on, PromptOnMerged: &on})
	e.w.cfg.MergeMethod = "squash"
	e.gh.SetChecks(owner, repoName, sha1, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
	e.steps(e.w, 2)
	if merges(e.gh) != 0 {
		t.Fatal("merged without an approval")
	}
	e.gh.AddReview(owner, repoName, e.pr.Number, forgetest.Review{User: "alice", State: "APPROVED", CommitID: sha1, SubmittedAt: time.Now().UTC().Truncate(time.Second)})
	e.steps(e.w, 4)
	if n := merges(e.gh); n != 1 {
		t.Fatalf("got %d merge calls, want 1", n)
	}
	st, _ := e.gh.PR(owner, repoName, e.pr.Number)
	if !st.Merged || st.MergeMethod != "squash" {
		t.Fatalf("forge state %+v", st)
	}
	merged := e.sink.of(Merged)
	if len(merged) != 1 || merged[0].Prompt == nil || merged[0].Prompt.Reason != ReasonMerged || !strings.Contains(merged[0].Prompt.Text, e.pr.URL) {
		t.Fatalf("merged events %+v (all: %s)", merged, e.sink.kinds())
	}
	if len(e.sink.of(kindMerge)) != 0 {
		t.Fatal("the watcher's own merge decision reached the sink")
	}
	rec := e.record()
	if rec.State != kanban.PRMerged || rec.Automation.LastMergeAttemptAt == nil || rec.Watch.MergeSHA != sha1 {
		t.Fatalf("record %+v", rec)
	}
	before := len(e.gh.Requests())
	e.steps(e.w, 3)
	if reqs := e.requestsSince(before); len(reqs) != 0 {
		t.Fatalf("a merged pull request is still polled: %+v", reqs)
	}
	if j := e.journal(); !strings.Contains(j, "merge:"+sha1+"=delivered") || strings.Count(j, "merge") != 2 {
		t.Fatalf("journal %q", j)
	}
}

// TestAutoMergeHeadMoved: a push after the merge was decided makes the
// forge refuse the merge (the expected head is sent), which is not tried
// again for that head; the error is shown.
func TestAutoMergeHeadMoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.set(kanban.PRAutomationUpdate{AutoMergeEnabled: &on})
	e.gh.SetChecks(owner, repoName, sha1, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
	e.gh.AddReview(owner, repoName, e.pr.Number, forgetest.Review{User: "alice", State: "APPROVED", CommitID: sha1, SubmittedAt: time.Now().UTC().Truncate(time.Second)})
	ctx := t.Context()
	e.w.poll(ctx)
	e.w.running.Wait()
	e.gh.UpdatePR(owner, repoName, e.pr.Number, func(p *forgetest.PullRequest) { p.HeadSHA = sha2 })
	e.w.deliver(ctx)
	e.w.running.Wait()
	e.steps(e.w, 2)
	if st, _ := e.gh.PR(owner, repoName, e.pr.Number); st.Merged {
		t.Fatal("merged a head that was not checked")
	}
	if n := merges(e.gh); n != 1 {
		t.Fatalf("got %d merge calls, want the one refused", n)
	}
	rec := e.record()
	if !strings.Contains(rec.Automation.LastError, "auto-merge") || !strings.Contains(rec.Automation.LastError, "head moved") || rec.HeadSHA != sha2 {
		t.Fatalf("record: error %q, head %s", rec.Automation.LastError, rec.HeadSHA)
	}
	if j := e.journal(); !strings.Contains(j, "merge:"+sha1+"=failed") {
		t.Fatalf("journal %q", j)
	}
}

func merges(gh *forgetest.GitHub) int {
	n := 0
	for _, r := range gh.Requests() {
		if r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/merge") {
			n++
		}
	}
	return n
}

// TestReviewCommentOnce: a review comment is one event, a review one
// event with its verdict; polling on adds nothing.
func TestReviewCommentOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now().UTC().Truncate(time.Second)
	c := e.gh.AddReviewComment(owner, repoName, e.pr.Number, forgetest.ReviewComment{User: "bob", Body: "Rename this to signIn.",
		Path: "src/login.go", Line: 12, Side: "RIGHT", CommitID: sha1, CreatedAt: now})
	e.gh.AddReview(owner, repoName, e.pr.Number, forgetest.Review{User: "bob", State: "CHANGES_REQUESTED", Body: "See the comments.", CommitID: sha1, SubmittedAt: now})
	e.steps(e.w, 4)
	comments, reviews := e.sink.of(ReviewCommented), e.sink.of(ReviewSubmitted)
	if len(comments) != 1 || comments[0].Comment.ID != c.ID || comments[0].Comment.Body != "Rename this to signIn." || comments[0].Comment.Path != "src/login.go" {
		t.Fatalf("comment events %+v", comments)
	}
	if len(reviews) != 1 || reviews[0].Review.State != "changes_requested" {
		t.Fatalf("review events %+v", reviews)
	}
	if rec := e.record(); rec.Review != kanban.ReviewChangesRequested || rec.Watch.LastCommentID != c.ID {
		t.Fatalf("record review %s, last comment %d", rec.Review, rec.Watch.LastCommentID)
	}
	// A later approval by the same reviewer wins; a second comment is one
	// more event.
	e.gh.AddReview(owner, repoName, e.pr.Number, forgetest.Review{User: "bob", State: "APPROVED", CommitID: sha1, SubmittedAt: now.Add(time.Minute)})
	e.gh.AddReviewComment(owner, repoName, e.pr.Number, forgetest.ReviewComment{User: "alice", Body: "Nit.", Path: "a.go", Line: 1, Side: "RIGHT",
		CommitID: sha1, CreatedAt: now.Add(time.Minute)})
	e.steps(e.w, 3)
	if n, m := len(e.sink.of(ReviewCommented)), len(e.sink.of(ReviewSubmitted)); n != 2 || m != 2 {
		t.Fatalf("got %d comment and %d review events, want 2 and 2", n, m)
	}
	if rec := e.record(); rec.Review != kanban.ReviewApproved {
		t.Fatalf("review state %s, want approved", rec.Review)
	}
}

// TestRestartNoRepeats: a restarted watcher (a new forge client with a
// cold cache, a new sink) over the same store delivers nothing again, and
// its polls are all 304s — the ETags outlived the process — so they find
// nothing new.
func TestRestartNoRepeats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.set(kanban.PRAutomationUpdate{AutoFixEnabled: &on, PromptOnReviewRequested: &on})
	now := time.Now().UTC().Truncate(time.Second)
	e.gh.SetChecks(owner, repoName, sha1, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "failure", Summary: "exit 1"})
	e.gh.AddReviewComment(owner, repoName, e.pr.Number, forgetest.ReviewComment{User: "bob", Body: "Why?", Path: "a.go", Line: 3, Side: "RIGHT", CommitID: sha1, CreatedAt: now})
	e.steps(e.w, 1) // the baseline of requested reviewers
	e.gh.UpdatePR(owner, repoName, e.pr.Number, func(p *forgetest.PullRequest) { p.RequestedReviewers = []string{"carol"} })
	e.steps(e.w, 3)
	if k := e.sink.kinds(); k != "checks_failing review_comment review_requested" {
		t.Fatalf("first run delivered %q", k)
	}
	j := e.journal()

	sink := &recorder{}
	restarted := e.watcher(e.st, newClient(t, e.gh), sink, "backend-2")
	before := len(e.gh.Requests())
	e.steps(restarted, 3)
	if got := sink.got(); len(got) != 0 {
		t.Fatalf("the restarted watcher delivered %d events again: %+v", len(got), got)
	}
	reqs := e.requestsSince(before)
	if len(reqs) == 0 {
		t.Fatal("the restarted watcher did not poll")
	}
	for _, r := range reqs {
		if r.Status != http.StatusNotModified || r.IfNoneMatch == "" {
			t.Fatalf("request %+v after the restart: want every poll answered 304 to a kept ETag", r)
		}
	}
	if j2 := e.journal(); j2 != j {
		t.Fatalf("the journal changed: %q → %q", j, j2)
	}
}

// TestNotModifiedNoEvents: polls of an unchanged pull request are all
// 304s and record no event.
func TestNotModifiedNoEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gh.SetChecks(owner, repoName, sha1, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
	e.steps(e.w, 2)
	delivered, j := len(e.sink.got()), e.journal()
	before := len(e.gh.Requests())
	e.steps(e.w, 3)
	reqs := e.requestsSince(before)
	if len(reqs) != 3*5 { // each poll: the pull request, its reviews, its comments, its check runs and statuses
		t.Fatalf("got %d requests in 3 polls, want 15: %+v", len(reqs), reqs)
	}
	for _, r := range reqs {
		if r.Status != http.StatusNotModified {
			t.Fatalf("request %+v: want 304", r)
		}
	}
	if len(e.sink.got()) != delivered || e.journal() != j {
		t.Fatalf("unchanged polls recorded events: %s", e.journal())
	}
	if p := e.record(); p.Watch.LastPolledAt == nil || p.Watch.Failures != 0 {
		t.Fatalf("watch %+v", p.Watch)
	}
}
