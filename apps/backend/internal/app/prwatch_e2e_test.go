package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The PR automation end to end: a real backend (its watcher polling the
// forge through the configured account, its webhook route), the mock
// agent run by the real runtime, and GitHub's API as Prism serving
// GitHub's OpenAPI description with request validation on, behind
// forgetest's stateful layer (Prism cannot hold state: the layer keeps
// the pull request, its checks, reviews and merge, which the test changes
// as GitHub would between polls).

var prism struct {
	once sync.Once
	p    *forgetest.Prism
	err  error
}

func closePrism() {
	if prism.p != nil {
		if err := prism.p.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}

const (
	ghToken    = "ghp_E2eT0kenOfTheServer0123456789abcdef"
	hookSecret = "whsec_e2e0123456789abcdef0123456789abc"
	ghOwner    = "octo-org"
	ghRepo     = "demo.app"
	headSHA1   = "1111111111111111111111111111111111111111"
	headSHA2   = "2222222222222222222222222222222222222222"
	// ghRemote is the repository's remote: its forges file entry's
	// remote_url (forge_repo: its path, octo-org/demo.app).
	ghRemote = "https://github.com/" + ghOwner + "/" + ghRepo + ".git"
)

// mockForge returns a stateful GitHub over the shared Prism (skipped
// without the mocks unless KANDEV_FORGE_TESTS=1).
func mockForge(t *testing.T) *forgetest.GitHub {
	t.Helper()
	prism.once.Do(func() { prism.p, prism.err = forgetest.StartPrism(context.Background()) })
	if prism.err != nil {
		if os.Getenv(forgetest.EnvRequired) == "1" {
			t.Fatalf("the GitHub API mock: %v", prism.err)
		}
		t.Skipf("the GitHub API mock is not available (%v); make -C tests/forge install", prism.err)
	}
	return forgetest.NewGitHub(t, prism.p, ghToken)
}

// withForge configures the backend's forge account of the repository
// prTask links (its token in a secret file) and GitHub webhook secret for
// gh through a forges file, as kandev serve --forges-file reads it,
// polling every 50ms.
func withForge(t *testing.T, gh *forgetest.GitHub) func(*Config) {
	return func(c *Config) {
		dir := t.TempDir()
		tok, sec, conf := filepath.Join(dir, "token"), filepath.Join(dir, "hook"), filepath.Join(dir, "forges.json")
		js := fmt.Sprintf(`{"poll_interval":"50ms","merge_method":"squash","repositories":[{"remote_url":%q,"forge":"github","api_url":%q,"token_file":%q}],`+
			`"webhooks":{"github":{"token_file":%q}}}`, ghRemote, gh.URL, tok, sec)
		for f, v := range map[string]string{tok: ghToken + "\n", sec: hookSecret + "\n", conf: js} {
			if err := os.WriteFile(f, []byte(v), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		c.ForgesFile = conf
	}
}

// prTask is a task with a mock agent session, a repository and a pull
// request opened on the mock and linked to it, on the first step (Work,
// with the automations events) of a new workflow Work → Done.
func (e *env) prTask(gh *forgetest.GitHub, events string) (*kanban.Task, string, *kanban.PullRequest, kanban.WorkflowStep) {
	e.t.Helper()
	ctx := context.Background()
	var wf action.WorkflowOut
	e.dispatch(kanban.ActionWorkflowCreate, json.RawMessage(fmt.Sprintf(`{"workspace_id":%q,"name":"Ship","steps":[{"name":"Work","events":%s},{"name":"Done"}]}`,
		e.workspaceID(), events)), &wf)
	repo, err := e.b.store.CreateRepository(ctx, kanban.Repository{WorkspaceID: e.workspaceID(), Name: ghRepo,
		RemoteURL: ghRemote})
	if err != nil {
		e.t.Fatal(err)
	}
	task, sess := e.startMock("Add the login form", "@say ready", map[string]any{"workflow_id": wf.Workflow.ID, "workflow_step_id": wf.Steps[0].ID})
	e.waitState(sess, kanban.SessionIdle)
	if _, err := e.b.store.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: repo.ID, BaseBranch: "main"}); err != nil {
		e.t.Fatal(err)
	}
	e.b.svc.ProfilesChanged(ctx, task.ID) // as the action linking a repository does: the PR tools are served
	gh.SetBranch(ghOwner, ghRepo, "main", headSHA2)
	gh.SetBranch(ghOwner, ghRepo, "kandev/login", headSHA1)
	client, err := e.b.forges.Client(kanban.ForgeGitHub, ghOwner+"/"+ghRepo)
	if err != nil {
		e.t.Fatal(err)
	}
	opened, err := client.OpenPR(ctx, forge.Repo{Owner: ghOwner, Name: ghRepo}, forge.NewPR{Title: "Add the login form", Head: "kandev/login", Base: "main"})
	if err != nil {
		e.t.Fatal(err)
	}
	pr, err := e.b.store.LinkPullRequest(ctx, kanban.PullRequest{TaskID: task.ID, RepositoryID: repo.ID, Forge: kanban.ForgeGitHub,
		ForgeRepo: ghOwner + "/" + ghRepo, Number: opened.Number, URL: opened.URL, Title: opened.Title, HeadBranch: "kandev/login",
		BaseBranch: "main", State: kanban.PROpen, HeadSHA: opened.HeadSHA})
	if err != nil {
		e.t.Fatal(err)
	}
	e.b.events.Emit(kanban.PullRequestsChanged{TaskID: task.ID}) // as the action linking a pull request does
	return task, sess, pr, wf.Steps[1]
}

// prompts returns the PR automation's prompts in a task's conversation.
func (e *env) prPrompts(taskID string) []string {
	var out []string
	for _, m := range e.conversation(taskID) {
		if m.Type == "prompt" && m.Author == prAuthor {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestPRAutomationEndToEnd: the agent turns auto-fix and auto-merge on
// with its tool; a failing check sends it one auto-fix prompt with the
// check's name and log excerpt, which the mock agent receives through the
// runtime; the fix pushed, green and approved, the pull request is merged
// once (squash, of the checked head); the merge prompts the agent and
// moves the task by its step's on_pr_merged rule.
func TestPRAutomationEndToEnd(t *testing.T) {
	gh := mockForge(t)
	e := newAgentEnv(t, withForge(t, gh))
	task, sess, pr, done := e.prTask(gh, `{"on_pr_merged":[{"type":"move_to_next"}]}`)

	// The agent turns the automation on with its own tool.
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: `@tool update_task_pr_automation_kandev ` +
		`{"auto_fix_enabled":true,"auto_merge_enabled":true,"prompt_on_merged":true,"auto_fix_prompt_override":"Fix the build.\n{{pr.feedback}}"}` +
		"\n@say switched on"}, nil)
	e.waitMessage(task.ID, "message", "switched on")
	got, err := e.b.store.PRAutomation(context.Background(), task.ID, kanban.ForgeGitHub)
	if err != nil || !got.AutoFixEnabled || !got.AutoMergeEnabled || len(got.PROptions) != 1 || got.PROptions[0].PRNumber != pr.Number ||
		got.AutoFixPromptOverride == nil {
		t.Fatalf("after the agent's call: %+v, %v", got, err)
	}

	runs := gh.SetChecks(ghOwner, ghRepo, headSHA1, forgetest.CheckRun{Name: "test (ubuntu)", Status: "completed", Conclusion: "failure",
		AppSlug: "github-actions", Title: "1 test failed"})
	gh.SetJobLog(runs[0].ID, "2026-12-01T10:00:00.0000000Z --- FAIL: TestLogin (0.01s)\n"+
		"2026-12-01T10:00:00.0000000Z @say saw the failing log of TestLogin\n"+
		"2026-12-01T10:00:01.0000000Z login_test.go:42: got 500 (token "+ghToken+")\n")
	// The mock agent follows the @say line of the excerpt: it received it.
	e.waitMessage(task.ID, "message", "saw the failing log of TestLogin")
	fix := e.prPrompts(task.ID)
	if len(fix) != 1 || !strings.Contains(fix[0], "Failing check: test (ubuntu) (failure)") || !strings.Contains(fix[0], "--- FAIL: TestLogin") ||
		!strings.HasPrefix(fix[0], "Fix the build.") || strings.Contains(fix[0], ghToken) {
		t.Fatalf("auto-fix prompts %q, want one with the check and its redacted excerpt", fix)
	}

	// The fix is pushed; its checks pass and a reviewer approves.
	gh.UpdatePR(ghOwner, ghRepo, pr.Number, func(p *forgetest.PullRequest) { p.HeadSHA = headSHA2 })
	gh.SetChecks(ghOwner, ghRepo, headSHA2, forgetest.CheckRun{Name: "test (ubuntu)", Status: "completed", Conclusion: "success"})
	gh.AddReview(ghOwner, ghRepo, pr.Number, forgetest.Review{User: "alice", State: "APPROVED", CommitID: headSHA2, SubmittedAt: time.Now().UTC().Truncate(time.Second)})
	e.waitMessage(task.ID, "prompt", "was merged")
	waitFor(t, func() bool { return e.task(task.ID).WorkflowStepID == done.ID })
	final, ok := gh.PR(ghOwner, ghRepo, pr.Number)
	if !ok || !final.Merged || final.MergeMethod != "squash" || final.HeadSHA != headSHA2 {
		t.Fatalf("on the forge: %+v", final)
	}
	merges := 0
	for _, r := range gh.Requests() {
		if r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/merge") {
			merges++
		}
	}
	time.Sleep(300 * time.Millisecond) // polls go on every 50ms: a second merge or prompt would show
	if n := len(e.prPrompts(task.ID)); merges != 1 || n != 2 {
		t.Fatalf("%d merge calls and %d automation prompts, want 1 and 2 (auto-fix, merged)", merges, n)
	}
	if v := gh.TakeViolations(); len(v) > 0 {
		t.Fatalf("requests GitHub would refuse: %v", v)
	}
	if strings.Contains(e.logs.String(), ghToken) {
		t.Fatal("the forge token reached the logs")
	}
	e.waitState(sess, kanban.SessionIdle)
}

// TestPRWebhookSignature: a delivery with a forged signature is refused
// (401) with nothing recorded; a signed one is taken (202): its review
// comment reaches the agent once and runs the step's on_comment.
func TestPRWebhookSignature(t *testing.T) {
	gh := mockForge(t)
	schemas, err := forgetest.LoadWebhooks()
	if err != nil {
		t.Fatal(err)
	}
	e := newAgentEnv(t, withForge(t, gh))
	task, _, pr, done := e.prTask(gh, `{"on_comment":[{"type":"move_to_next"}]}`)
	waitFor(t, func() bool {
		p, _ := e.b.store.GetPullRequest(context.Background(), pr.ID)
		return p.Watch.LastPolledAt != nil
	})

	at := time.Now().UTC().Truncate(time.Second)
	c := gh.AddReviewComment(ghOwner, ghRepo, pr.Number, forgetest.ReviewComment{User: "bob", Body: "@say got the review comment", Path: "login.go",
		Line: 3, Side: "RIGHT", CommitID: headSHA1, CreatedAt: at})
	body := reviewCommentDelivery(t, schemas, pr.Number, c, at)
	post := func(sig string) int {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/webhooks/github", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", "pull_request_review_comment")
		req.Header.Set("X-Hub-Signature-256", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	e.settleFlow()
	before := e.journalOf(pr.ID)
	if got := post(forgetest.Sign("not-the-secret", body)); got != http.StatusUnauthorized {
		t.Fatalf("forged signature: %d, want 401", got)
	}
	if after := e.journalOf(pr.ID); after != before {
		t.Fatalf("a forged delivery changed the journal: %q → %q", before, after)
	}
	if got := post(forgetest.Sign(hookSecret, body)); got != http.StatusAccepted {
		t.Fatalf("signed delivery: %d, want 202", got)
	}
	e.waitMessage(task.ID, "message", "got the review comment")
	waitFor(t, func() bool { return e.task(task.ID).WorkflowStepID == done.ID })
	if n := strings.Count(strings.Join(e.prPrompts(task.ID), "\n"), "got the review comment"); n != 1 {
		t.Fatalf("the comment reached the agent %d times, want once", n)
	}
}

// journalOf returns a pull request's event journal as "key=state" words.
func (e *env) journalOf(prID string) string {
	e.t.Helper()
	l, err := e.b.store.ListPREvents(context.Background(), prID, kanban.Page{Limit: kanban.MaxLimit})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range l.Items {
		out = append(out, ev.Key+"="+string(ev.State))
	}
	return strings.Join(out, " ")
}

// reviewCommentDelivery is the pull_request_review_comment delivery of c
// GitHub documents: the smallest its schema allows with c's values,
// checked against @octokit/openapi-webhooks.
func reviewCommentDelivery(t *testing.T, schemas *forgetest.Webhooks, number int, c forgetest.ReviewComment, at time.Time) []byte {
	t.Helper()
	m, err := schemas.Minimal("pull-request-review-comment-created")
	if err != nil {
		t.Fatal(err)
	}
	set := func(path string, v any) {
		cur := m
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
		cur[parts[len(parts)-1]] = v
	}
	for k, v := range map[string]any{"repository.name": ghRepo, "repository.owner.login": ghOwner, "number": number,
		"pull_request.number": number, "pull_request.head.sha": headSHA1, "comment.id": c.ID, "comment.body": c.Body,
		"comment.path": c.Path, "comment.line": c.Line, "comment.side": "RIGHT", "comment.commit_id": headSHA1, "comment.user.login": c.User,
		"comment.created_at": at.Format(time.RFC3339), "comment.updated_at": at.Format(time.RFC3339)} {
		set(k, v)
	}
	body := []byte(mustJSON(t, m))
	if err := schemas.Check("pull-request-review-comment-created", body); err != nil {
		t.Fatalf("the test's payload is not one GitHub documents: %v", err)
	}
	return body
}
