package forge

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// These tests run the GitLab client against forgetest's GitLab, a
// loopback fixture server whose shapes cite GitLab's REST API docs page
// by page (GitLab's OpenAPI description is on no registry this project
// installs from): it validates every request strictly — a request the
// docs do not allow fails the test at cleanup — and holds the state a
// test sets between calls.

const (
	glToken   = "glpat-ApiT0kenOfTheServer0123456789"
	glProject = "octo-group/platform/demo.app"
	glBranch  = "kandev/0a1b2c3d"
)

var glRepo = Repo{Owner: "octo-group/platform", Name: "demo.app"}

func mockGitLab(t *testing.T) (*forgetest.GitLab, *GitLab) {
	t.Helper()
	gl := forgetest.NewGitLab(t, glToken)
	gl.AddProject(glProject, map[string]string{"main": sha2, glBranch: sha1})
	return gl, newGitLabClient(t, gl.URL, glToken)
}

func newGitLabClient(t *testing.T, url, token string) *GitLab {
	t.Helper()
	c, err := NewGitLab(GitLabConfig{URL: url, Token: mustToken(t, token), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantGitLabCode is wantCode with GitLab's texts also never echoed.
func wantGitLabCode(t *testing.T, err error, code kanban.Code) Error {
	t.Helper()
	e := wantCode(t, err, code)
	for _, s := range []string{glToken, "PRIVATE-TOKEN", "401 Unauthorized", "404 Not found", "Another open merge request", "does not exist", "SHA does not match", "Retry later"} {
		if strings.Contains(err.Error(), s) || strings.Contains(e.Detail(), glToken) {
			t.Fatalf("error %q (detail %q) echoes %q or the token", err, e.Detail(), s)
		}
	}
	return e
}

// checkGitLabConditionalReads: the second read of an unchanged MR (!1, a
// draft at sha1) is a 304.
func checkGitLabConditionalReads(t *testing.T, gl *forgetest.GitLab, c *GitLab) {
	t.Helper()
	ctx := t.Context()
	if first, err := c.PR(ctx, glRepo, 1); err != nil || first.NotModified || first.State != PRDraft {
		t.Fatalf("first read: %+v, %v", first, err)
	}
	again, err := c.PR(ctx, glRepo, 1)
	if err != nil || !again.NotModified || again.State != PRDraft || again.HeadSHA != sha1 {
		t.Fatalf("second read: %+v, %v; want the same MR, not modified", again, err)
	}
	if last := lastRequest(gl); last.IfNoneMatch == "" || last.Status != http.StatusNotModified {
		t.Fatalf("last request %+v: want If-None-Match answered 304", last)
	}
}

// checkGitLabMerge: a merge of what was checked (!1, ready at sha2): the
// stale head is refused (409), the current one merges (squashed), and a
// merged MR is refused (405).
func checkGitLabMerge(t *testing.T, gl *forgetest.GitLab, c *GitLab) {
	t.Helper()
	ctx := t.Context()
	_, err := c.Merge(ctx, glRepo, 1, MergeRequest{Method: MergeSquash, ExpectedHeadSHA: sha1})
	if e := wantGitLabCode(t, err, kanban.CodeConflict); e.Status != http.StatusConflict || !strings.Contains(err.Error(), "head moved") {
		t.Fatalf("stale sha: %v (status %d)", err, e.Status)
	}
	if st, _ := gl.MR(glProject, 1); st.State != "opened" {
		t.Fatalf("a refused merge changed the MR: %+v", st)
	}
	res, err := c.Merge(ctx, glRepo, 1, MergeRequest{Method: MergeSquash, ExpectedHeadSHA: sha2, CommitTitle: "Add the login form (!1)"})
	st, _ := gl.MR(glProject, 1)
	if err != nil || !res.Merged || res.SHA != st.SquashCommit || !st.Squash {
		t.Fatalf("merge: %+v, %v; forge state %+v", res, err, st)
	}
	merged, err := c.PR(ctx, glRepo, 1)
	if err != nil || merged.State != PRMerged || merged.MergedAt == nil {
		t.Fatalf("after merge: %+v, %v", merged, err)
	}
	_, err = c.Merge(ctx, glRepo, 1, MergeRequest{Method: MergeCommit})
	if e := wantGitLabCode(t, err, kanban.CodeConflict); e.Status != http.StatusMethodNotAllowed {
		t.Fatalf("merging a merged MR: %v (status %d), want 405", err, e.Status)
	}
}

func TestGitLabMergeRequestLifecycle(t *testing.T) {
	gl, c := mockGitLab(t)
	ctx := t.Context()

	// A draft: GitLab's create call has no draft field; the title's
	// "Draft: " prefix makes it one.
	mr, err := c.OpenPR(ctx, glRepo, NewPR{Title: "Add the login form", Body: "Closes #4\n\nDone by the agent.", Head: glBranch, Base: "main", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	if mr.Number != 1 || mr.State != PRDraft || mr.Head != glBranch || mr.Base != "main" || mr.HeadSHA != sha1 || mr.Title != "Draft: Add the login form" {
		t.Fatalf("opened %+v", mr)
	}
	if !strings.HasSuffix(mr.URL, "/"+glProject+"/-/merge_requests/1") || mr.Mergeable == nil || *mr.Mergeable || mr.MergeableState != "draft_status" {
		t.Fatalf("opened: url %q, mergeable %v (%s)", mr.URL, mr.Mergeable, mr.MergeableState)
	}
	if st, _ := gl.MR(glProject, 1); st.Description != "Closes #4\n\nDone by the agent." {
		t.Fatalf("the forge got description %q", st.Description)
	}

	checkGitLabConditionalReads(t, gl, c)

	// Ready, and a new head: open, but not mergeable until approved and green.
	gl.UpdateMR(glProject, 1, func(m *forgetest.GitLabMR) {
		m.Title, m.SHA, m.Reviewers = "Add the login form", sha2, []string{"alice"}
	})
	open, err := c.PR(ctx, glRepo, 1)
	if err != nil || open.NotModified || open.State != PROpen || open.HeadSHA != sha2 || open.Mergeable == nil || *open.Mergeable ||
		open.MergeableState != "not_approved" || !slices.Equal(open.RequestedReviewers, []string{"alice"}) {
		t.Fatalf("after update: %+v, %v", open, err)
	}
	gl.Approve(glProject, 1, forgetest.GitLabApproval{UserID: 7, Username: "alice", ApprovedAt: time.Now().UTC()})
	gl.SetStatuses(glProject, sha2, forgetest.GitLabStatus{Name: "test", Status: "success", Job: true})
	if ready, err := c.PR(ctx, glRepo, 1); err != nil || ready.Mergeable == nil || !*ready.Mergeable || ready.MergeableState != "mergeable" {
		t.Fatalf("approved and green: %+v, %v", ready, err)
	}

	checkGitLabMerge(t, gl, c)

	// Another MR for the branch pair; a duplicate; an unknown branch.
	if _, err := c.OpenPR(ctx, glRepo, NewPR{Title: "t", Head: glBranch, Base: "main"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.OpenPR(ctx, glRepo, NewPR{Title: "t", Head: glBranch, Base: "main"})
	wantGitLabCode(t, err, kanban.CodeConflict)
	_, err = c.OpenPR(ctx, glRepo, NewPR{Title: "t", Head: "no-such-branch", Base: "main"})
	if e := wantGitLabCode(t, err, kanban.CodeValidation); e.Safe.Field != "head" || strings.Contains(err.Error(), "no-such-branch") {
		t.Fatalf("got %v (field %q), want a head refusal that does not echo the branch", err, e.Safe.Field)
	}
	_, err = c.PR(ctx, glRepo, 99)
	wantGitLabCode(t, err, kanban.CodeNotFound)
	_, err = c.PR(ctx, Repo{Owner: "octo-group", Name: "nope"}, 1)
	wantGitLabCode(t, err, kanban.CodeNotFound)

	// Closed without merging.
	gl.UpdateMR(glProject, 2, func(m *forgetest.GitLabMR) { m.State = "closed" })
	if closed, err := c.PR(ctx, glRepo, 2); err != nil || closed.State != PRClosed || closed.MergedAt != nil {
		t.Fatalf("closed: %+v, %v", closed, err)
	}
}

func lastRequest(gl *forgetest.GitLab) forgetest.Seen {
	reqs := gl.Requests()
	return reqs[len(reqs)-1]
}

func TestGitLabNotesAndApprovals(t *testing.T) {
	gl, c := mockGitLab(t)
	ctx := t.Context()
	if _, err := c.OpenPR(ctx, glRepo, NewPR{Title: "t", Head: glBranch, Base: "main"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for i := range 230 { // old comments: more than two pages, before since
		gl.AddNote(glProject, 1, forgetest.GitLabNote{Author: "carol", Body: "old", Path: "a.go", NewLine: 1, HeadSHA: sha1, CreatedAt: t0.Add(-time.Duration(300-i) * time.Minute)})
	}
	gl.AddNote(glProject, 1, forgetest.GitLabNote{Author: "bob", Body: "general comment, not on the diff", CreatedAt: t0.Add(time.Hour)})
	gl.AddNote(glProject, 1, forgetest.GitLabNote{Author: "bob", Body: "added 1 commit", System: true, CreatedAt: t0.Add(time.Hour)})
	long := strings.Repeat("é", MaxTextBytes)
	root := gl.AddNote(glProject, 1, forgetest.GitLabNote{Author: "bob", Body: long, Path: "src/login.go", NewLine: 12, StartLine: 10, HeadSHA: sha1, CreatedAt: t0.Add(time.Hour)})
	removed := gl.AddNote(glProject, 1, forgetest.GitLabNote{Author: "alice", Body: "why remove this?", Path: "src/old.go", OldLine: 4, HeadSHA: sha1, CreatedAt: t0.Add(2 * time.Hour)})
	// An old comment edited after since comes with the new ones, by its update.
	edited := gl.AddNote(glProject, 1, forgetest.GitLabNote{Author: "carol", Body: "edited", Path: "b.go", NewLine: 2, HeadSHA: sha1, CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0.Add(3 * time.Hour)})

	before := len(gl.Requests())
	cs, err := c.ReviewComments(ctx, glRepo, 1, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(gl.Requests()) - before; n != 1 {
		t.Fatalf("read %d pages of notes, want 1 (newest first, stopping at since)", n)
	}
	if len(cs.Items) != 3 || cs.Items[0].ID != root.ID || cs.Items[1].ID != removed.ID || cs.Items[2].ID != edited.ID {
		t.Fatalf("got %+v, want the three diff notes since, oldest update first", cs.Items)
	}
	got := cs.Items[0]
	if got.Author != "bob" || got.Path != "src/login.go" || got.Line != 12 || got.StartLine != 10 || got.Side != "RIGHT" || got.CommitSHA != sha1 ||
		!got.CreatedAt.Equal(t0.Add(time.Hour)) || len(got.Body) > MaxTextBytes+len("…") || !strings.HasSuffix(got.Body, "…") {
		t.Fatalf("root comment %+v (body %d bytes)", got, len(got.Body))
	}
	if l := cs.Items[1]; l.Side != "LEFT" || l.Line != 4 || l.Path != "src/old.go" {
		t.Fatalf("comment on a removed line: %+v", l)
	}
	all, err := c.ReviewComments(ctx, glRepo, 1, time.Time{})
	if err != nil || len(all.Items) != 233 || all.Truncated {
		t.Fatalf("all diff notes: %d, %v", len(all.Items), err)
	}
	if again, err := c.ReviewComments(ctx, glRepo, 1, t0.Add(time.Minute)); err != nil || !again.NotModified {
		t.Fatalf("unchanged notes: not modified %v, %v", again != nil && again.NotModified, err)
	}

	// Approvals are approved reviews, oldest first; since filters them.
	gl.Approve(glProject, 1, forgetest.GitLabApproval{UserID: 9, Username: "bob", ApprovedAt: t0.Add(time.Hour)})
	gl.Approve(glProject, 1, forgetest.GitLabApproval{UserID: 7, Username: "alice", ApprovedAt: t0})
	rv, err := c.Reviews(ctx, glRepo, 1, time.Time{})
	if err != nil || len(rv.Items) != 2 || rv.Items[0].Author != "alice" || rv.Items[1].Author != "bob" || rv.Items[0].State != ReviewApproved ||
		rv.Items[0].ID >= rv.Items[1].ID || !rv.Items[1].SubmittedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("approvals: %+v, %v", rv, err)
	}
	if since, err := c.Reviews(ctx, glRepo, 1, t0); err != nil || len(since.Items) != 1 || since.Items[0].Author != "bob" {
		t.Fatalf("approvals since t0: %+v, %v", since, err)
	}
	if again, err := c.Reviews(ctx, glRepo, 1, time.Time{}); err != nil || !again.NotModified {
		t.Fatalf("unchanged approvals: %+v, %v", again, err)
	}
	gl.Unapprove(glProject, 1, "bob")
	if rv, err := c.Reviews(ctx, glRepo, 1, time.Time{}); err != nil || rv.NotModified || len(rv.Items) != 1 || rv.Items[0].Author != "alice" {
		t.Fatalf("after bob withdrew his approval: %+v, %v", rv, err)
	}
}

func TestGitLabChecksAndLog(t *testing.T) {
	gl, c := mockGitLab(t)
	ctx := t.Context()
	st := gl.SetStatuses(glProject, sha1,
		forgetest.GitLabStatus{Name: "build", Status: "success", Job: true},
		forgetest.GitLabStatus{Name: "test: [ubuntu]", Status: "failed", Job: true},
		forgetest.GitLabStatus{Name: "lint", Status: "failed", AllowFailure: true, Job: true},
		forgetest.GitLabStatus{Name: "deploy", Status: "manual", AllowFailure: true, Job: true},
		forgetest.GitLabStatus{Name: "docs", Status: "skipped", Job: true},
		forgetest.GitLabStatus{Name: "ci/legacy", Status: "failed", Description: "2 tests failed"})
	got, err := c.Checks(ctx, glRepo, sha1)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != ChecksFailing || got.Total != 6 || got.Passed != 4 || got.Failed != 2 || got.Pending != 0 || len(got.Failing) != 2 || got.NotModified {
		t.Fatalf("got %+v", got)
	}
	job := got.Failing[0]
	if job.ID != st[1].ID || job.Name != "test: [ubuntu]" || job.Kind != "job" || !job.HasLog || job.Conclusion != "failed" ||
		!strings.HasSuffix(job.URL, "/"+glProject+"/-/jobs/"+strconv.FormatInt(st[1].ID, 10)) {
		t.Fatalf("failing job %+v", job)
	}
	if ext := got.Failing[1]; ext.Name != "ci/legacy" || ext.Kind != "status" || ext.HasLog || ext.Summary != "2 tests failed" {
		t.Fatalf("failing external status %+v", ext)
	}
	if again, err := c.Checks(ctx, glRepo, sha1); err != nil || !again.NotModified || again.State != ChecksFailing {
		t.Fatalf("unchanged checks: %+v, %v", again, err)
	}

	// The failed job's log: long, coloured, in sections, with the token.
	var log strings.Builder
	log.WriteString("\x1b[0KRunning with gitlab-runner 17.5.0\n")
	for i := range 4000 {
		log.WriteString("section_start:1733047200:step_script\r\x1b[0K\x1b[36;1m$ go test ./...\x1b[0;m ok " + strings.Repeat("x", i%40) + "\n")
	}
	log.WriteString("--- FAIL: TestLogin (0.01s)\n")
	log.WriteString("login_test.go:42: PRIVATE-TOKEN: " + glToken + "\n")
	log.WriteString("section_end:1733047260:step_script\r\x1b[0K\x1b[31;1mERROR: Job failed: exit code 1\x1b[0;m\n")
	gl.SetJobLog(st[1].ID, log.String())
	lg, err := c.CheckLog(ctx, glRepo, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !lg.Truncated || len(lg.Text) > MaxLogBytes || !strings.HasSuffix(lg.Text, "ERROR: Job failed: exit code 1\n") || !strings.Contains(lg.Text, "--- FAIL: TestLogin") {
		t.Fatalf("got truncated %v, %d bytes, tail %q", lg.Truncated, len(lg.Text), lg.Text[max(0, len(lg.Text)-120):])
	}
	for _, bad := range []string{"\x1b", "section_start", "section_end", "\r", glToken} {
		if strings.Contains(lg.Text, bad) {
			t.Fatalf("log excerpt contains %q", bad)
		}
	}
	_, err = c.CheckLog(ctx, glRepo, 424242)
	wantGitLabCode(t, err, kanban.CodeNotFound)

	gl.SetStatuses(glProject, sha2, forgetest.GitLabStatus{Name: "build", Status: "running", Job: true},
		forgetest.GitLabStatus{Name: "release", Status: "manual", Job: true})
	if got, err := c.Checks(ctx, glRepo, sha2); err != nil || got.State != ChecksPending || got.Pending != 2 {
		t.Fatalf("running, and a blocking manual job: %+v, %v", got, err)
	}
	if got, err := c.Checks(ctx, glRepo, strings.Repeat("3", 40)); err != nil || got.State != ChecksNone {
		t.Fatalf("no statuses: %+v, %v", got, err)
	}
}
