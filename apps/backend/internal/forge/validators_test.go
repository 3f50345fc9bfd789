package forge

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forgetest"
)

// pollPR reads pull request #1 of repo, its reviews and sha1's checks
// with the validators v, as the watcher's poll does.
func pollPR(t *testing.T, c *GitHub, v *Validators) (*PR, *Reviews, *Checks) {
	t.Helper()
	vctx := WithValidators(t.Context(), v)
	pr, err := c.PR(vctx, repo, 1)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := c.Reviews(vctx, repo, 1, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Checks(vctx, repo, sha1)
	if err != nil {
		t.Fatal(err)
	}
	return pr, rv, ch
}

// checkAllNotModified checks that every request was conditional and
// answered 304.
func checkAllNotModified(t *testing.T, reqs []forgetest.Seen) {
	t.Helper()
	for _, r := range reqs {
		if r.Status != http.StatusNotModified || r.IfNoneMatch == "" {
			t.Fatalf("request %+v: want a conditional request answered 304", r)
		}
	}
}

// TestValidatorsOutliveTheClient: the ETags one client recorded make a new
// client's first reads 304s (a restarted backend, or another backend, polls
// for free); a method whose URLs changed only in part reads those again
// without the caller's ETags, so its answer is whole; a changed pull
// request is read in full.
func TestValidatorsOutliveTheClient(t *testing.T) {
	gh, first := mockGitHub(t)
	gh.SetBranch(repo.Owner, repo.Name, "main", sha2)
	gh.SetBranch(repo.Owner, repo.Name, "kandev/0a1b2c3d", sha1)
	ctx := t.Context()
	if _, err := first.OpenPR(ctx, repo, NewPR{Title: "t", Head: "kandev/0a1b2c3d", Base: "main"}); err != nil {
		t.Fatal(err)
	}
	gh.UpdatePR(repo.Owner, repo.Name, 1, func(p *forgetest.PullRequest) { p.RequestedReviewers = []string{"alice", "bob"} })
	gh.SetChecks(repo.Owner, repo.Name, sha1, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})

	v1 := NewValidators(nil)
	pr, _, ch := pollPR(t, first, v1)
	if pr.NotModified || !slices.Equal(pr.RequestedReviewers, []string{"alice", "bob"}) || ch.State != ChecksPassing {
		t.Fatalf("first poll: %+v, checks %+v", pr, ch)
	}
	kept := v1.Seen()
	if len(kept) != 4 { // the PR, its reviews, the check runs, the statuses
		t.Fatalf("got %d validators %v, want 4", len(kept), kept)
	}

	// A new client (a restarted backend): every read is a 304 with no value.
	second := newClient(t, gh)
	before := len(gh.Requests())
	v2 := NewValidators(kept)
	pr, rv, ch := pollPR(t, second, v2)
	if !pr.NotModified || pr.Number != 0 || !rv.NotModified || len(rv.Items) != 0 || !ch.NotModified || ch.State != "" || ch.SHA != sha1 {
		t.Fatalf("second client's poll: %+v, %+v, %+v; want not modified, without values", pr, rv, ch)
	}
	checkAllNotModified(t, gh.Requests()[before:])
	if got := v2.Seen(); len(got) != 4 {
		t.Fatalf("the second poll kept %d validators, want 4", len(got))
	}

	// Only the statuses change: the checks are read again whole.
	gh.SetStatuses(repo.Owner, repo.Name, sha1, forgetest.Status{Context: "deploy", State: "failure"})
	third := newClient(t, gh)
	ch, err := third.Checks(WithValidators(ctx, NewValidators(kept)), repo, sha1)
	if err != nil || ch.NotModified || ch.State != ChecksFailing || ch.Total != 2 {
		t.Fatalf("partly changed checks: %+v, %v; want both the run and the status", ch, err)
	}
	// The pull request changes: read in full.
	gh.UpdatePR(repo.Owner, repo.Name, 1, func(p *forgetest.PullRequest) { p.RequestedReviewers = nil })
	pr, err = third.PR(WithValidators(ctx, NewValidators(kept)), repo, 1)
	if err != nil || pr.NotModified || pr.Number != 1 || len(pr.RequestedReviewers) != 0 {
		t.Fatalf("changed PR: %+v, %v", pr, err)
	}
	// A read whose result the caller dropped (its poll failed later, or
	// lost a race): with the ETags the caller kept, the next read is whole
	// again, though this client read the change already.
	gh.UpdatePR(repo.Owner, repo.Name, 1, func(p *forgetest.PullRequest) { p.Title = "Renamed" })
	for i := range 2 {
		pr, err = third.PR(WithValidators(ctx, NewValidators(kept)), repo, 1)
		if err != nil || pr.NotModified || pr.Title != "Renamed" {
			t.Fatalf("read %d after a dropped one: %+v, %v; want the change again", i+1, pr, err)
		}
	}
	// Without validators nothing is seeded.
	if _, err := newClient(t, gh).PR(context.Background(), repo, 1); err != nil {
		t.Fatal(err)
	}
	if last := gh.Requests()[len(gh.Requests())-1]; last.IfNoneMatch != "" {
		t.Fatalf("a read without validators sent If-None-Match %q", last.IfNoneMatch)
	}
}

func newClient(t *testing.T, gh *forgetest.GitHub) *GitHub {
	t.Helper()
	c, err := NewGitHub(GitHubConfig{APIURL: gh.URL, Token: mustToken(t, apiToken)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
