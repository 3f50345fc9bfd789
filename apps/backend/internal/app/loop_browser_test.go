package app

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// loop is the loop's backend, remote, forge, task and browser tab.
type loop struct {
	t      *testing.T
	e      *env
	gh     *forgetest.GitHub
	remote *gittest.Remote
	repo   string
	task   *kanban.Task
	done   string // the Done step
	b      *tab
	op     func(name kanban.Action, in, out any)
}

// TestLoopEndToEndInTheBoard: the whole loop, in a real Chromium on a real backend: the mock agent
// (run by the real runtime in the task's git worktree) edits a file; the
// Changes tab shows the diff; the operator's line comment, sent as a
// review, reaches the agent; the operator commits, pushes (to a bare
// repository served by git http-backend on loopback, Basic auth checked)
// and opens a pull request on GitHub's API as Prism serves it with
// request validation on, behind forgetest's stateful layer (Prism holds
// no state: the layer keeps the pull request, its checks, reviews and
// merge, and the test tells it what a push would: the branch's head). A
// failing check's log reaches the agent as the auto-fix prompt; it fixes
// the file, the tab refreshes by itself, the operator commits and pushes
// the fix; green and approved, the watcher merges it (auto-merge) and the
// task moves by its step's on_pr_merged rule to Done, where the card's
// badge says merged. Every wait is on an event or on the page's state,
// bounded.
func TestLoopEndToEndInTheBoard(t *testing.T) {
	l := newLoop(t)
	l.reviewReachesTheAgent()
	branch, sha := l.commitAndPush("Add answer", "Created")
	l.gh.SetBranch(ghOwner, "demo", branch, sha)
	l.gh.SetBranch(ghOwner, "demo", "main", strings.TrimSpace(gitOut(t, l.repo, "rev-parse", "main")))
	pr := l.openPR()
	l.autoFix(pr, sha)
	_, fixed := l.commitAndPush("Fix the build", "Updated")
	l.mergedAndMoved(pr, fixed)
}

// newLoop starts the backend with the forge account of the remote (its
// token in a secret file; polls every 50 ms; auto-merge squashes) and a
// task of the mock agent on a workflow Work (on_pr_merged: move on) →
// Done that has written src/answer.go; the board is signed in.
func newLoop(t *testing.T) *loop {
	l := &loop{t: t, gh: mockForge(t), remote: gittest.NewRemote(t, gittest.RemoteOptions{Token: e2eToken}), repo: gitRepo(t)}
	gitOut(t, l.repo, "push", "-q", l.remote.Dir, "main")
	dir := t.TempDir()
	secret, forges := filepath.Join(dir, "github-token"), filepath.Join(dir, "forges.json")
	writeFile(t, secret, e2eToken+"\n")
	writeFile(t, forges, fmt.Sprintf(`{"poll_interval":"50ms","merge_method":"squash","repositories":[{"remote_url":%q,"forge":"github",`+
		`"api_url":%q,"forge_repo":"%s/demo","token_file":%q}]}`, l.remote.URL, l.gh.URL, ghOwner, secret))
	l.e = newAgentEnv(t, func(c *Config) { c.ForgesFile = forges })
	l.op = func(name kanban.Action, in, out any) { l.e.dispatch(name, in, out) }
	var wf action.WorkflowOut
	l.op(kanban.ActionWorkflowCreate, json.RawMessage(fmt.Sprintf(`{"workspace_id":%q,"name":"Ship","steps":[`+
		`{"name":"Work","events":{"on_pr_merged":[{"type":"move_to_next"}]}},{"name":"Done"}]}`, l.e.workspaceID())), &wf)
	l.done = wf.Steps[1].ID
	var r kanban.Repository
	l.op(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{LocalPath: l.repo, RemoteURL: l.remote.URL}, &r)
	task, sid := l.e.startMock("Answer", "Write it.\n@write src/answer.go package answer\\n\\nconst Answer = 41\\n\n@say written",
		map[string]any{"repository_id": r.ID, "executor_profile_id": l.e.executorProfileNamed("exec-worktree"),
			"workflow_id": wf.Workflow.ID, "workflow_step_id": wf.Steps[0].ID})
	l.task = task
	l.e.waitState(sid, kanban.SessionIdle)
	l.e.waitMessage(task.ID, "message", "written")
	l.b = newTab(t, l.e)
	l.b.signIn()
	return l
}

// reviewReachesTheAgent: the diff in the Changes tab, a comment on its
// line, sent as a review that the agent answers.
func (l *loop) reviewReachesTheAgent() {
	b := l.b
	b.open("#/task/"+l.task.ID, "task")
	b.click("#tab-changes")
	b.until("the agent's file", `document.querySelector('#panel-changes .file[data-path="src/answer.go"]')`)
	b.click(`#panel-changes .file[data-path="src/answer.go"] .file-open`)
	line := `#diff-view tr.line.add[data-side=new][data-line="3"]`
	b.until("the diff's line", fmt.Sprintf(`(document.querySelector(%q) || {}).textContent?.includes('const Answer = 41')`, line))
	b.click(line + " .line-comment")
	b.set("#diff-view .comment-form textarea", "@say review seen: 41 is one short")
	b.click("#diff-view .comment-form button.primary")
	b.until("the open comment", `document.getElementById('review-open').textContent === '1 open comment'`)
	b.click("#send-review")
	b.until("the review sent", `(document.getElementById('review-result') || {}).textContent?.startsWith('Sent 1 to the agent')`)
	l.e.waitMessage(l.task.ID, "message", "review seen: 41 is one short")
}

// commitAndPush commits every change from the tab's ship panel and
// pushes the branch; it returns the branch and the pushed commit.
func (l *loop) commitAndPush(message, pushed string) (string, string) {
	b := l.b
	b.until("the ship controls", `document.querySelector('#panel-changes details.ship')`)
	b.js(`(() => { const d = document.querySelector('#panel-changes details.ship'); d.open = true; d.querySelector('.ship-status').textContent = ''; return true; })()`, nil)
	b.set("#panel-changes .ship-commit [name=message]", message)
	b.click("#panel-changes .ship-commit button.primary")
	b.until("the commit", `(document.querySelector('#panel-changes .ship-status') || {}).textContent?.startsWith('Committed ')`)
	var commits action.CommitsOut
	l.op(kanban.ActionTaskChangesCommits, action.ChangesIn{TaskID: l.task.ID}, &commits)
	if len(commits.Items) == 0 || commits.Items[0].Subject != message {
		l.t.Fatalf("commits on the task branch: %+v", commits.List)
	}
	b.click("#panel-changes .ship-push")
	b.until("the push", fmt.Sprintf(`(document.querySelector('#panel-changes .ship-status') || {}).textContent === %q`, "Pushed "+commits.Branch+": "+pushed))
	if got := l.remote.Ref(l.t, "refs/heads/"+commits.Branch); got != commits.Items[0].SHA {
		l.t.Fatalf("the remote's branch: %s, want %s", got, commits.Items[0].SHA)
	}
	return commits.Branch, commits.Items[0].SHA
}

// openPR opens the pull request from the tab and has the agent turn
// auto-fix and auto-merge on with its own tool.
func (l *loop) openPR() *kanban.PullRequest {
	b := l.b
	b.set("#panel-changes .ship-pr [name=title]", "Add answer")
	b.click("#panel-changes .ship-pr button.primary")
	b.until("the pull request listed", `document.querySelector('#task-prs .pr[data-state=open]')`)
	l.op(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: l.task.ID, Prompt: `@tool update_task_pr_automation_kandev ` +
		`{"auto_fix_enabled":true,"auto_merge_enabled":true}` + "\n@say automation on"}, nil)
	l.e.waitMessage(l.task.ID, "message", "automation on")
	var prs kanban.List[kanban.PullRequest]
	l.op(kanban.ActionTaskPRList, action.PRListIn{TaskID: l.task.ID}, &prs)
	if len(prs.Items) != 1 || !prs.Items[0].Options.AutoFixEnabled || !prs.Items[0].Options.AutoMergeEnabled {
		l.t.Fatalf("pull requests: %+v", prs.Items)
	}
	return &prs.Items[0]
}

// autoFix fails a check of the pushed head; its log reaches the agent as
// the auto-fix prompt, which it follows (the log's directives) to fix the
// file; the open tab shows the failing checks and then the edit, by itself.
func (l *loop) autoFix(pr *kanban.PullRequest, sha string) {
	runs := l.gh.SetChecks(ghOwner, "demo", sha, forgetest.CheckRun{Name: "test (ubuntu)", Status: "completed", Conclusion: "failure",
		AppSlug: "github-actions", Title: "1 test failed"})
	l.gh.SetJobLog(runs[0].ID, "2026-12-02T10:00:00.0000000Z --- FAIL: TestAnswer (0.01s)\n"+
		"2026-12-02T10:00:00.1000000Z answer_test.go:7: got 41, want 42\n"+
		"2026-12-02T10:00:00.2000000Z @write src/answer.go package answer\\n\\nconst Answer = 42\\n\n"+
		"2026-12-02T10:00:00.3000000Z @say fixed from the failing log\n")
	l.b.until("the failing checks, live", `document.querySelector('#task-prs .pr[data-state=open] .badge.checks-failing')`)
	l.e.waitMessage(l.task.ID, "message", "fixed from the failing log")
	fix := l.e.prPrompts(l.task.ID)
	if len(fix) != 1 || !strings.Contains(fix[0], "test (ubuntu)") || !strings.Contains(fix[0], "got 41, want 42") {
		l.t.Fatalf("auto-fix prompts %q, want one with the check's name and log excerpt", fix)
	}
	l.b.until("the fix in the tab, without a Refresh", `(document.querySelector('#panel-changes .file[data-path="src/answer.go"]') || {}).textContent?.includes('unstaged')`)
	l.b.until("the fixed line in the diff", `(document.querySelector('#diff-view tr.line.add[data-line="3"]') || {}).textContent?.includes('const Answer = 42')`)
}

// mergedAndMoved: the fix's checks pass and a reviewer approves; the
// watcher merges (squash, of the fixed head) and the task moves to Done.
func (l *loop) mergedAndMoved(pr *kanban.PullRequest, fixed string) {
	l.gh.SetBranch(ghOwner, "demo", pr.HeadBranch, fixed)
	l.gh.UpdatePR(ghOwner, "demo", pr.Number, func(p *forgetest.PullRequest) { p.HeadSHA = fixed }) // as GitHub does on a push
	l.gh.SetChecks(ghOwner, "demo", fixed, forgetest.CheckRun{Name: "test (ubuntu)", Status: "completed", Conclusion: "success"})
	l.gh.AddReview(ghOwner, "demo", pr.Number, forgetest.Review{User: "alice", State: "APPROVED", CommitID: fixed, SubmittedAt: time.Now().UTC().Truncate(time.Second)})
	// The watcher's next poll merges it: on a loaded machine (the whole
	// package under -race) that round can come later than a page wait.
	l.b.untilFor("the merged pull request in the tab", `document.querySelector('#task-prs .pr[data-state=merged]')`, 90*time.Second)
	waitFor(l.t, func() bool { return l.e.task(l.task.ID).WorkflowStepID == l.done })
	final, ok := l.gh.PR(ghOwner, "demo", pr.Number)
	if !ok || !final.Merged || final.MergeMethod != "squash" || final.HeadSHA != fixed {
		l.t.Fatalf("on the forge: %+v", final)
	}
	l.b.open(fmt.Sprintf("#/?ws=%s&wf=%s", l.e.workspaceID(), l.task.WorkflowID), "board")
	l.b.until("the card in Done with its merged badge", fmt.Sprintf(`document.querySelector('.card[data-id=%q]')?.dataset.step === %q && `+
		`document.querySelector('.card[data-id=%q] .pr-badge')?.dataset.state === 'merged'`, l.task.ID, l.done, l.task.ID))
	if v := l.gh.TakeViolations(); len(v) > 0 {
		l.t.Fatalf("requests GitHub would refuse: %v", v)
	}
	if strings.Contains(l.e.logs.String(), e2eToken) {
		l.t.Fatal("the forge token reached the logs")
	}
}
