package forge

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// These tests run the GitHub client against Prism serving GitHub's own
// OpenAPI description with request validation on, behind forgetest's
// stateful layer: every request the client sends is validated by Prism
// (a request GitHub would refuse fails the test at cleanup), and the
// layer holds the state Prism cannot — a pull request stays merged after
// the merge call; reviews, comments, checks and logs are what each test
// sets.

var repo = Repo{Owner: "octo-org", Name: "demo.app"}

const (
	sha1 = "1111111111111111111111111111111111111111"
	sha2 = "2222222222222222222222222222222222222222"
)

// checkConditionalReads: the second read of an unchanged PR (#1, a draft
// at sha1) is a 304.
func checkConditionalReads(t *testing.T, gh *forgetest.GitHub, c *GitHub) {
	t.Helper()
	ctx := t.Context()
	first, err := c.PR(ctx, repo, 1)
	if err != nil || first.NotModified || first.State != PRDraft {
		t.Fatalf("first read: %+v, %v", first, err)
	}
	again, err := c.PR(ctx, repo, 1)
	if err != nil || !again.NotModified || again.State != PRDraft || again.HeadSHA != sha1 {
		t.Fatalf("second read: %+v, %v; want the same PR, not modified", again, err)
	}
	reqs := gh.Requests()
	last := reqs[len(reqs)-1]
	if last.IfNoneMatch == "" || last.Status != http.StatusNotModified {
		t.Fatalf("last request %+v: want If-None-Match answered 304", last)
	}
}

func TestPullRequestLifecycle(t *testing.T) {
	gh, c := mockGitHub(t)
	gh.SetBranch(repo.Owner, repo.Name, "main", sha2)
	gh.SetBranch(repo.Owner, repo.Name, "kandev/0a1b2c3d", sha1)
	ctx := t.Context()

	pr, err := c.OpenPR(ctx, repo, NewPR{Title: "Add the login form", Body: "Closes #4\n\nDone by the agent.", Head: "kandev/0a1b2c3d", Base: "main", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Number != 1 || pr.State != PRDraft || pr.Head != "kandev/0a1b2c3d" || pr.Base != "main" || pr.HeadSHA != sha1 || pr.Title != "Add the login form" {
		t.Fatalf("opened %+v", pr)
	}
	if !strings.HasSuffix(pr.URL, "/octo-org/demo.app/pull/1") {
		t.Fatalf("got url %q", pr.URL)
	}

	checkConditionalReads(t, gh, c)

	// Ready for review, then the agent pushes a new head.
	gh.UpdatePR(repo.Owner, repo.Name, 1, func(p *forgetest.PullRequest) { p.Draft = false; p.HeadSHA = sha2 })
	open, err := c.PR(ctx, repo, 1)
	if err != nil || open.NotModified || open.State != PROpen || open.HeadSHA != sha2 || open.Mergeable == nil || !*open.Mergeable {
		t.Fatalf("after update: %+v, %v", open, err)
	}

	// A merge of what was checked: the stale head is refused, the current merges.
	_, err = c.Merge(ctx, repo, 1, MergeRequest{Method: MergeSquash, ExpectedHeadSHA: sha1})
	wantCode(t, err, kanban.CodeConflict)
	res, err := c.Merge(ctx, repo, 1, MergeRequest{Method: MergeSquash, ExpectedHeadSHA: sha2, CommitTitle: "Add the login form (#1)"})
	if err != nil || !res.Merged || len(res.SHA) != 40 {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	if st, _ := gh.PR(repo.Owner, repo.Name, 1); st.MergeMethod != "squash" {
		t.Fatalf("the forge got merge method %q, want squash", st.MergeMethod)
	}
	merged, err := c.PR(ctx, repo, 1)
	if err != nil || merged.State != PRMerged || merged.MergedAt == nil {
		t.Fatalf("after merge: %+v, %v", merged, err)
	}
	_, err = c.Merge(ctx, repo, 1, MergeRequest{Method: MergeCommit})
	wantCode(t, err, kanban.CodeConflict) // already merged: 405

	// A second PR for an open branch pair, and one from an unknown branch.
	gh.SetBranch(repo.Owner, repo.Name, "kandev/ffff0000", sha1)
	if _, err := c.OpenPR(ctx, repo, NewPR{Title: "t", Head: "kandev/ffff0000", Base: "main"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.OpenPR(ctx, repo, NewPR{Title: "t", Head: "kandev/ffff0000", Base: "main"})
	wantCode(t, err, kanban.CodeConflict)
	_, err = c.OpenPR(ctx, repo, NewPR{Title: "t", Head: "no-such-branch", Base: "main"})
	e := wantCode(t, err, kanban.CodeValidation)
	if e.Safe.Field != "head" || strings.Contains(err.Error(), "no-such-branch") {
		t.Fatalf("got %v (field %q), want a head refusal that does not echo the branch", err, e.Safe.Field)
	}
	_, err = c.PR(ctx, repo, 99)
	wantCode(t, err, kanban.CodeNotFound)
}

func TestReviewsAndComments(t *testing.T) {
	gh, c := mockGitHub(t)
	gh.SetBranch(repo.Owner, repo.Name, "main", sha2)
	gh.SetBranch(repo.Owner, repo.Name, "kandev/0a1b2c3d", sha1)
	if _, err := c.OpenPR(t.Context(), repo, NewPR{Title: "t", Head: "kandev/0a1b2c3d", Base: "main"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	long := strings.Repeat("é", MaxTextBytes) // 2 bytes each: cut at a rune boundary
	gh.AddReview(repo.Owner, repo.Name, 1, forgetest.Review{User: "alice", State: "COMMENTED", Body: "first look", CommitID: sha1, SubmittedAt: t0})
	gh.AddReview(repo.Owner, repo.Name, 1, forgetest.Review{User: "bob", State: "CHANGES_REQUESTED", Body: long, CommitID: sha1, SubmittedAt: t0.Add(time.Hour)})
	for i := range 120 { // over one page of 100
		gh.AddReview(repo.Owner, repo.Name, 1, forgetest.Review{User: "carol", State: "APPROVED", CommitID: sha1, SubmittedAt: t0.Add(2*time.Hour + time.Duration(i)*time.Minute)})
	}
	all, err := c.Reviews(t.Context(), repo, 1, time.Time{})
	if err != nil || len(all.Items) != 122 || all.NotModified {
		t.Fatalf("all reviews: %d, %v, not modified %v", len(all.Items), err, all != nil && all.NotModified)
	}
	since, err := c.Reviews(t.Context(), repo, 1, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(since.Items) != 121 || since.Items[0].Author != "bob" || since.Items[0].State != ReviewChangesRequested || since.Items[1].State != ReviewApproved {
		t.Fatalf("reviews since t0: %d, first %+v", len(since.Items), since.Items[0])
	}
	if b := since.Items[0].Body; len(b) > MaxTextBytes+len("…") || !strings.HasSuffix(b, "…") || !strings.HasPrefix(b, "éé") {
		t.Fatalf("a %d-byte body came back as %d bytes, want it bounded", len(long), len(b))
	}
	if again, err := c.Reviews(t.Context(), repo, 1, t0); err != nil || !again.NotModified {
		t.Fatalf("unchanged reviews: not modified %v, %v", again != nil && again.NotModified, err)
	}

	gh.AddReviewComment(repo.Owner, repo.Name, 1, forgetest.ReviewComment{User: "alice", Body: "old", Path: "a.go", Line: 3, Side: "RIGHT", CommitID: sha1, CreatedAt: t0})
	root := gh.AddReviewComment(repo.Owner, repo.Name, 1, forgetest.ReviewComment{User: "bob", Body: "rename this", Path: "src/login.go", Line: 12, StartLine: 10, Side: "RIGHT", CommitID: sha1, CreatedAt: t0.Add(time.Hour)})
	gh.AddReviewComment(repo.Owner, repo.Name, 1, forgetest.ReviewComment{User: "alice", Body: "agreed", Path: "src/login.go", Line: 12, Side: "RIGHT", InReplyTo: root.ID, CommitID: sha1, CreatedAt: t0.Add(2 * time.Hour)})
	cs, err := c.ReviewComments(t.Context(), repo, 1, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Items) != 2 {
		t.Fatalf("got %d comments since, want 2", len(cs.Items))
	}
	got := cs.Items[0]
	if got.ID != root.ID || got.Author != "bob" || got.Path != "src/login.go" || got.Line != 12 || got.StartLine != 10 || got.Side != "RIGHT" || got.CommitSHA != sha1 || !got.CreatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("got %+v", got)
	}
	if cs.Items[1].InReplyTo != root.ID {
		t.Fatalf("reply: got %+v, want in reply to %d", cs.Items[1], root.ID)
	}
}

func TestChecksCombined(t *testing.T) {
	gh, c := mockGitHub(t)
	runs := gh.SetChecks(repo.Owner, repo.Name, sha1,
		forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success", AppSlug: "github-actions"},
		forgetest.CheckRun{Name: "test (ubuntu)", Status: "completed", Conclusion: "failure", Title: "2 tests failed", Summary: "TestLogin: got 500, want 200", Text: "details", AppSlug: "github-actions", DetailsURL: "https://ci.example/run/7"},
		forgetest.CheckRun{Name: "lint", Status: "in_progress"},
		forgetest.CheckRun{Name: "docs", Status: "completed", Conclusion: "skipped"},
	)
	gh.SetStatuses(repo.Owner, repo.Name, sha1,
		forgetest.Status{Context: "ci/legacy", State: "success"},
		forgetest.Status{Context: "deploy/preview", State: "error", Description: "preview failed to build", TargetURL: "https://preview.example/1"})
	got, err := c.Checks(t.Context(), repo, sha1)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != ChecksFailing || got.Total != 6 || got.Passed != 3 || got.Failed != 2 || got.Pending != 1 || len(got.Failing) != 2 || got.NotModified {
		t.Fatalf("got %+v", got)
	}
	run := got.Failing[0]
	if run.ID != runs[1].ID || run.Name != "test (ubuntu)" || run.Kind != "check_run" || !run.HasLog || run.Conclusion != "failure" ||
		run.Summary != "2 tests failed\n\nTestLogin: got 500, want 200\n\ndetails" || run.URL != "https://ci.example/run/7" {
		t.Fatalf("failing run: %+v", run)
	}
	if st := got.Failing[1]; st.Name != "deploy/preview" || st.Kind != "status" || st.Summary != "preview failed to build" || st.HasLog {
		t.Fatalf("failing status: %+v", st)
	}
	if again, err := c.Checks(t.Context(), repo, sha1); err != nil || !again.NotModified || again.State != ChecksFailing {
		t.Fatalf("unchanged checks: %+v, %v", again, err)
	}

	gh.SetChecks(repo.Owner, repo.Name, sha2, forgetest.CheckRun{Name: "build", Status: "queued"})
	if got, err := c.Checks(t.Context(), repo, sha2); err != nil || got.State != ChecksPending {
		t.Fatalf("queued: %+v, %v", got, err)
	}
	gh.SetChecks(repo.Owner, repo.Name, sha2, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
	if got, err := c.Checks(t.Context(), repo, sha2); err != nil || got.State != ChecksPassing || got.NotModified {
		t.Fatalf("green: %+v, %v", got, err)
	}
	if got, err := c.Checks(t.Context(), repo, strings.Repeat("3", 40)); err != nil || got.State != ChecksNone {
		t.Fatalf("no checks: %+v, %v", got, err)
	}
}

func TestCheckLogExcerpt(t *testing.T) {
	gh, c := mockGitHub(t)
	runs := gh.SetChecks(repo.Owner, repo.Name, sha1, forgetest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure", AppSlug: "github-actions"})
	var log bytes.Buffer
	for i := range 5000 {
		log.WriteString("2026-12-01T10:00:00.1234567Z \x1b[36mstep output line\x1b[0m " + strings.Repeat("x", i%40) + "\n")
	}
	log.WriteString("2026-12-01T10:00:01.0000000Z --- FAIL: TestLogin (0.01s)\n")
	log.WriteString("2026-12-01T10:00:01.0000000Z Authorization: Bearer " + apiToken + "\n")
	log.WriteString("2026-12-01T10:00:01.0000000Z ##[error]Process completed with exit code 1.\n")
	gh.SetJobLog(runs[0].ID, log.String())
	got, err := c.CheckLog(t.Context(), repo, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Truncated || len(got.Text) > MaxLogBytes || !strings.HasSuffix(got.Text, "##[error]Process completed with exit code 1.\n") {
		t.Fatalf("got truncated %v, %d bytes, tail %q", got.Truncated, len(got.Text), got.Text[max(0, len(got.Text)-80):])
	}
	for _, bad := range []string{"\x1b", "2026-12-01T", apiToken} {
		if strings.Contains(got.Text, bad) {
			t.Fatalf("log excerpt contains %q", bad)
		}
	}
	if !strings.HasPrefix(got.Text, "step output line") || !strings.Contains(got.Text, "--- FAIL: TestLogin") {
		t.Fatalf("excerpt does not start at a whole line or lacks the failure: %q…", got.Text[:80])
	}
	_, err = c.CheckLog(t.Context(), repo, 424242)
	wantCode(t, err, kanban.CodeNotFound)
}

func wantCode(t *testing.T, err error, code kanban.Code) Error {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("got %v (%T), want a *forge.Error with code %s", err, err, code)
	}
	if kanban.ErrorCode(err) != code {
		t.Fatalf("got %v, want code %s", err, code)
	}
	for _, s := range []string{apiToken, "Bearer", "Validation Failed", "Not Found", "Bad credentials", "documentation_url"} {
		if strings.Contains(err.Error(), s) || strings.Contains(e.Detail(), apiToken) {
			t.Fatalf("error %q (detail %q) echoes %q or the token", err, e.Detail(), s)
		}
	}
	return *e
}
