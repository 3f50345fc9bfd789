package prwatch

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// The watcher on GitLab: forgetest's GitLab fixture server (its shapes
// cite GitLab's REST API docs; it validates every request strictly and
// holds the merge request's state, which the test changes between
// polls) and a real store.

const (
	glToken   = "glpat-ApiT0kenOfTheServer0123456789"
	glProject = "octo-group/platform/demo.app"
)

// glEnv is a task with a merge request open on the fixture, its store
// record, and a watcher of it.
type glEnv struct {
	t      *testing.T
	gl     *forgetest.GitLab
	st     *store.Store
	client *forge.GitLab
	sink   *recorder
	w      *Watcher
	task   *kanban.Task
	pr     *kanban.PullRequest
}

func newGitLabEnv(t *testing.T) *glEnv {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	must(t, err)
	t.Cleanup(func() { _ = st.Close() })
	gl := forgetest.NewGitLab(t, glToken)
	gl.AddProject(glProject, map[string]string{"main": sha2, branch: sha1})
	tok, err := credential.Parse(glToken)
	must(t, err)
	client, err := forge.NewGitLab(forge.GitLabConfig{URL: gl.URL, Token: tok})
	must(t, err)
	e := &glEnv{t: t, gl: gl, st: st, client: client, sink: &recorder{}}

	ws, err := st.CreateWorkspace(ctx, "Ship", "")
	must(t, err)
	wf, err := st.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: "Kanban"})
	must(t, err)
	_, err = st.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: wf.ID, Name: "Review", AllowManualMove: true})
	must(t, err)
	repo, err := st.CreateRepository(ctx, kanban.Repository{WorkspaceID: ws.ID, Name: "demo.app", RemoteURL: "https://gitlab.example/" + glProject + ".git"})
	must(t, err)
	e.task, _, err = st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: ws.ID, Title: "Add the login form",
		Repository: &kanban.TaskRepositoryInput{RepositoryID: repo.ID}})
	must(t, err)
	opened, err := client.OpenPR(ctx, forge.Repo{Owner: "octo-group/platform", Name: "demo.app"}, forge.NewPR{Title: "Add the login form", Head: branch, Base: "main"})
	must(t, err)
	e.pr, err = st.LinkPullRequest(ctx, kanban.PullRequest{TaskID: e.task.ID, RepositoryID: repo.ID, Forge: kanban.ForgeGitLab,
		ForgeRepo: glProject, Number: opened.Number, URL: opened.URL, Title: opened.Title, HeadBranch: branch, BaseBranch: "main",
		State: kanban.PROpen, HeadSHA: opened.HeadSHA})
	must(t, err)
	e.w, err = New(Config{Store: st, Forges: ForgesFunc(func(context.Context, kanban.PullRequest) (forge.Forge, error) { return client, nil }),
		Sink: e.sink, Backend: "backend-1", Interval: time.Nanosecond, Backoff: forge.Backoff{Base: time.Millisecond, Max: 10 * time.Millisecond}})
	must(t, err)
	return e
}

func (e *glEnv) steps(n int) {
	e.t.Helper()
	for range n {
		e.w.step(e.t.Context())
	}
}

func (e *glEnv) set(u kanban.PRAutomationUpdate) {
	e.t.Helper()
	_, err := e.st.UpdatePRAutomation(context.Background(), e.task.ID, kanban.ForgeGitLab, u)
	must(e.t, err)
}

func (e *glEnv) record() *kanban.PullRequest {
	e.t.Helper()
	p, err := e.st.GetPullRequest(context.Background(), e.pr.ID)
	must(e.t, err)
	return p
}

func (e *glEnv) journal() string {
	e.t.Helper()
	l, err := e.st.ListPREvents(context.Background(), e.pr.ID, kanban.Page{Limit: kanban.MaxLimit})
	must(e.t, err)
	var out []string
	for _, ev := range l.Items {
		out = append(out, ev.Key+"="+string(ev.State))
	}
	return strings.Join(out, " ")
}

func (e *glEnv) merges() int {
	n := 0
	for _, r := range e.gl.Requests() {
		if r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/merge") {
			n++
		}
	}
	return n
}

// gitlabJobLog is a GitLab CI job's log: long, coloured, in sections,
// with the token in it, ending on the failure.
func gitlabJobLog() string {
	var b strings.Builder
	b.WriteString("Running with gitlab-runner 17.5.0\n")
	for i := range 3000 {
		b.WriteString("section_start:1733047200:step_script\r\x1b[0K\x1b[36;1m$ go test ./...\x1b[0;m ok " + strings.Repeat("x", i%50) + "\n")
	}
	b.WriteString("--- FAIL: TestLogin (0.01s)\n")
	b.WriteString("login_test.go:42: got 500, want 200 (PRIVATE-TOKEN " + glToken + ")\n")
	b.WriteString("section_end:1733047260:step_script\r\x1b[0K\x1b[31;1mERROR: Job failed: exit code 1\x1b[0;m\n")
	return b.String()
}

// checkAutoFixEvent checks the one failing-pipeline event: the failing
// job (jobID), its log's cleaned end, and the auto-fix prompt carrying
// them, redacted.
func checkAutoFixEvent(t *testing.T, ev Event, jobID int64) {
	t.Helper()
	c, p := ev.Check, ev.Prompt
	if c == nil || c.Name != "test" || c.ID != jobID || c.Conclusion != "failed" || !c.Truncated || len(c.Excerpt) > kanban.MaxAutoFixExcerpt ||
		!strings.Contains(c.Excerpt, "--- FAIL: TestLogin") || ev.HeadSHA != sha1 {
		t.Fatalf("check %+v", c)
	}
	if p == nil || p.Reason != ReasonAutoFix || !strings.Contains(p.Text, "Failing check: test (failed)") ||
		!strings.Contains(p.Text, "ERROR: Job failed: exit code 1") || len(p.Text) > kanban.MaxPromptLen {
		t.Fatalf("prompt %+v", p)
	}
	for _, bad := range []string{glToken, "\x1b", "section_start", "section_end"} {
		if strings.Contains(p.Text, bad) {
			t.Fatalf("the prompt carries %q", bad)
		}
	}
}

// checkMergedOnce checks the merge at sha2: squashed on the forge, the
// approval and the merge reported once each, the record and the journal.
func checkMergedOnce(t *testing.T, e *glEnv) {
	t.Helper()
	st, _ := e.gl.MR(glProject, e.pr.Number)
	if st.State != "merged" || st.MergeSHAParam != sha2 || !st.Squash {
		t.Fatalf("forge state %+v: want merged, squashed, with the checked head's sha", st)
	}
	if rv := e.sink.of(ReviewSubmitted); len(rv) != 1 || rv[0].Review.Author != "alice" || rv[0].Review.State != forge.ReviewApproved {
		t.Fatalf("review events %+v", rv)
	}
	merged := e.sink.of(Merged)
	if len(merged) != 1 || merged[0].Prompt == nil || merged[0].Prompt.Reason != ReasonMerged {
		t.Fatalf("merged events %+v (all: %s)", merged, e.sink.kinds())
	}
	rec := e.record()
	if rec.State != kanban.PRMerged || rec.Watch.MergeSHA != sha2 {
		t.Fatalf("record %+v", rec)
	}
	if j := e.journal(); !strings.Contains(j, "merge:"+sha2+"=delivered") || strings.Count(j, "checks_failing") != 1 {
		t.Fatalf("journal %q", j)
	}
}

// TestGitLabAutoFixThenMerge drives a GitLab merge request end to end:
// a pipeline still running is waited for; once it fails, exactly one
// auto-fix prompt is sent, with the failing job's name and the cleaned,
// redacted end of its log; the agent's fix (a new head) goes green, is
// approved, and is merged exactly once, with the head's sha; the merge
// is then seen and polling stops.
func TestGitLabAutoFixThenMerge(t *testing.T) {
	t.Parallel()
	e := newGitLabEnv(t)
	e.set(kanban.PRAutomationUpdate{AutoFixEnabled: &on, AutoMergeEnabled: &on, PromptOnMerged: &on})
	e.w.cfg.MergeMethod = forge.MergeSquash
	jobs := e.gl.SetStatuses(glProject, sha1,
		forgetest.GitLabStatus{Name: "test", Status: "failed", Job: true, PipelineID: 31},
		forgetest.GitLabStatus{Name: "lint", Status: "running", Job: true, PipelineID: 31})
	e.gl.SetJobLog(jobs[0].ID, gitlabJobLog())
	e.steps(2)
	if got := e.sink.of(ChecksFailing); len(got) != 0 {
		t.Fatalf("reported a failing pipeline while a job still runs: %+v", got)
	}

	e.gl.SetStatuses(glProject, sha1, jobs[0], forgetest.GitLabStatus{ID: jobs[1].ID, Name: "lint", Status: "success", Job: true, PipelineID: 31})
	e.steps(4)
	got := e.sink.of(ChecksFailing)
	if len(got) != 1 {
		t.Fatalf("got %d failing-pipeline events (%s), want 1", len(got), e.sink.kinds())
	}
	checkAutoFixEvent(t, got[0], jobs[0].ID)
	e.steps(3)
	if n := len(e.sink.of(ChecksFailing)); n != 1 || e.record().Automation.AutoFixRounds != 1 {
		t.Fatalf("polling on: %d failing events, %d rounds; want 1 and 1", n, e.record().Automation.AutoFixRounds)
	}

	// The agent pushes a fix; its pipeline passes; no merge without an approval.
	e.gl.UpdateMR(glProject, e.pr.Number, func(m *forgetest.GitLabMR) { m.SHA = sha2 })
	e.gl.SetStatuses(glProject, sha2, forgetest.GitLabStatus{Name: "test", Status: "success", Job: true, PipelineID: 32},
		forgetest.GitLabStatus{Name: "lint", Status: "success", Job: true, PipelineID: 32})
	e.steps(3)
	if n := e.merges(); n != 0 {
		t.Fatalf("merged without an approval (%d merge calls)", n)
	}
	if rec := e.record(); rec.HeadSHA != sha2 || rec.Checks != kanban.ChecksPassing {
		t.Fatalf("after the fix: head %s, checks %s", rec.HeadSHA, rec.Checks)
	}

	e.gl.Approve(glProject, e.pr.Number, forgetest.GitLabApproval{UserID: 7, Username: "alice", ApprovedAt: time.Now().UTC()})
	e.steps(4)
	if n := e.merges(); n != 1 {
		t.Fatalf("got %d merge calls, want 1", n)
	}
	checkMergedOnce(t, e)
	before := len(e.gl.Requests())
	e.steps(3)
	if n := len(e.gl.Requests()) - before; n != 0 {
		t.Fatalf("a merged merge request is still polled (%d requests)", n)
	}
}

// TestGitLabNotModifiedPolls: polls of an unchanged merge request are
// all 304s (the merge request, its approvals, its notes, its head's
// statuses) and record nothing; a new diff note is one event.
func TestGitLabNotModifiedPolls(t *testing.T) {
	t.Parallel()
	e := newGitLabEnv(t)
	e.gl.SetStatuses(glProject, sha1, forgetest.GitLabStatus{Name: "build", Status: "success", Job: true})
	e.steps(2)
	j := e.journal()
	before := len(e.gl.Requests())
	e.steps(3)
	reqs := e.gl.Requests()[before:]
	if len(reqs) != 3*4 {
		t.Fatalf("got %d requests in 3 polls, want 12: %+v", len(reqs), reqs)
	}
	for _, r := range reqs {
		if r.Status != http.StatusNotModified || r.IfNoneMatch == "" {
			t.Fatalf("request %+v: want a conditional request answered 304", r)
		}
	}
	if e.journal() != j {
		t.Fatalf("unchanged polls recorded events: %s", e.journal())
	}
	n := e.gl.AddNote(glProject, e.pr.Number, forgetest.GitLabNote{Author: "bob", Body: "Rename this to signIn.", Path: "src/login.go",
		NewLine: 12, HeadSHA: sha1, CreatedAt: time.Now().UTC()})
	e.gl.AddNote(glProject, e.pr.Number, forgetest.GitLabNote{Author: "bob", Body: "a general comment", CreatedAt: time.Now().UTC()})
	e.steps(3)
	if cs := e.sink.of(ReviewCommented); len(cs) != 1 || cs[0].Comment.ID != n.ID || cs[0].Comment.Line != 12 || cs[0].Comment.Path != "src/login.go" {
		t.Fatalf("comment events %+v", cs)
	}
}

// TestGitLabWebhook: a forged or missing X-Gitlab-Token is 401 and
// nothing is recorded; a diff note delivered (twice) is one event, and
// the poll that sees it on the forge adds nothing; a finished pipeline
// makes the merge request due at once.
func TestGitLabWebhook(t *testing.T) {
	t.Parallel()
	e := newGitLabEnv(t)
	secret, err := credential.Parse(webhookSecret)
	must(t, err)
	h := e.w.GitLabWebhook(Static(secret))
	at := time.Now().UTC().Truncate(time.Second)
	note := forgetest.GitLabNote{Author: "bob", Body: "Please add a test.", Path: "src/login.go", NewLine: 7, HeadSHA: sha1, CreatedAt: at}
	note = e.gl.AddNote(glProject, e.pr.Number, note)
	body := forgetest.NoteHook(glProject, e.pr.Number, sha1, note)
	fingerprint := func() string { return e.journal() + "|" + e.record().Watch.NextPollAt.String() }
	before := fingerprint()
	for name, token := range map[string]string{"forged": "whsec_not_the_secret_0000000000000", "missing": "", "prefix": webhookSecret[:8]} {
		if got := forgetest.PostGitLabHook(h, forge.GitLabNoteHook, token, body); got != http.StatusUnauthorized {
			t.Errorf("%s token: got %d, want 401", name, got)
		}
	}
	if after := fingerprint(); after != before {
		t.Fatalf("a refused delivery changed the store: %s → %s", before, after)
	}
	if got := forgetest.PostGitLabHook(e.w.GitLabWebhook(Static(credential.Token{})), forge.GitLabNoteHook, webhookSecret, body); got != http.StatusServiceUnavailable {
		t.Fatalf("without a secret: got %d, want 503", got)
	}
	for range 2 { // GitLab retries deliveries
		if got := forgetest.PostGitLabHook(h, forge.GitLabNoteHook, webhookSecret, body); got != http.StatusAccepted {
			t.Fatalf("delivery: got %d, want 202", got)
		}
	}
	if j := e.journal(); j != "comment:"+strconv.FormatInt(note.ID, 10)+"=pending" {
		t.Fatalf("journal after two deliveries: %q", j)
	}
	e.steps(3)
	if cs := e.sink.of(ReviewCommented); len(cs) != 1 || cs[0].Comment.ID != note.ID || cs[0].Comment.Body != "Please add a test." {
		t.Fatalf("comment events %+v: want the one comment once", cs)
	}
	if got := forgetest.PostGitLabHook(h, "Push Hook", webhookSecret, []byte(`{"object_kind":"push"}`)); got != http.StatusAccepted {
		t.Fatalf("an event the watcher does not act on: %d", got)
	}
	if got := forgetest.PostGitLabHook(h, forge.GitLabPipelineHook, webhookSecret, []byte(`{"object_kind":`)); got != http.StatusBadRequest {
		t.Fatalf("a payload that is not JSON: %d", got)
	}

	p := e.record()
	p.Watch.NextPollAt = time.Now().Add(time.Hour)
	_, err = e.st.RecordPoll(context.Background(), *p, nil)
	must(t, err)
	pipeline := forgetest.PipelineHook(glProject, 0, 31, sha1, "failed", []forgetest.GitLabStatus{{ID: 77, Name: "test", Status: "failed"}})
	if got := forgetest.PostGitLabHook(h, forge.GitLabPipelineHook, webhookSecret, pipeline); got != http.StatusAccepted {
		t.Fatalf("pipeline delivery: %d", got)
	}
	if p := e.record(); p.Watch.NextPollAt.After(time.Now()) {
		t.Fatalf("the pipeline's delivery did not make the merge request due (next poll %v)", p.Watch.NextPollAt)
	}
}
