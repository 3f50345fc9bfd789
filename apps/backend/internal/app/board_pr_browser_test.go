package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/forgetest"
)

// TestBoardPRBadgeAndMerge: in a real Chromium, a task's card carries
// its pull request's badge (from the workspace listing), which the PR
// watcher's polls of the Prism-backed GitHub redraw live (checks failing,
// then approved); on the task's Changes tab the operator merges it with
// the method they choose, after a confirmation; a refused merge shows the
// forge's reason and changes nothing; the merge moves the task by its
// step's on_pr_merged rule and the card's badge says merged.
func TestBoardPRBadgeAndMerge(t *testing.T) {
	gh := mockForge(t)
	e := newAgentEnv(t, withForge(t, gh))
	task, _, pr, done := e.prTask(gh, `{"on_pr_merged":[{"type":"move_to_next"}]}`)
	b := newTab(t, e)
	b.signIn()
	b.open(fmt.Sprintf("#/?ws=%s&wf=%s", e.workspaceID(), task.WorkflowID), "board")
	badge := fmt.Sprintf(`document.querySelector('.card[data-id=%q] .pr-badge')`, task.ID)
	b.until("the card's open badge", badge+`?.dataset.state === 'open'`)
	if got := b.str(badge + `.textContent`); !strings.Contains(got, fmt.Sprintf("#%d Open", pr.Number)) {
		t.Fatalf("badge %q", got)
	}
	gh.SetChecks(ghOwner, ghRepo, headSHA1, forgetest.CheckRun{Name: "test", Status: "completed", Conclusion: "failure"})
	b.until("the failing checks on the badge, live", badge+`?.dataset.checks === 'failing' && `+badge+`.textContent.includes('checks failing')`)
	gh.SetChecks(ghOwner, ghRepo, headSHA1, forgetest.CheckRun{Name: "test", Status: "completed", Conclusion: "success"})
	gh.AddReview(ghOwner, ghRepo, pr.Number, forgetest.Review{User: "alice", State: "APPROVED", CommitID: headSHA1})
	b.until("passing and approved on the badge", badge+`?.dataset.checks === 'passing' && `+badge+`.dataset.review === 'approved'`)

	// Not mergeable on the forge: the refusal is shown, nothing merged.
	no := false
	gh.UpdatePR(ghOwner, ghRepo, pr.Number, func(p *forgetest.PullRequest) { p.Mergeable = &no })
	b.open("#/task/"+task.ID, "task")
	b.click("#tab-changes")
	b.until("the merge control", `document.querySelector('#task-prs .pr[data-state=open] .pr-merge')`)
	b.set("#task-prs .merge-method", "squash")
	b.click("#task-prs .pr-merge")
	b.until("the confirmation", `!document.querySelector('#task-prs .merge-confirm').hidden && document.querySelector('#task-prs .merge-confirm').textContent.includes('Squash and merge: #')`)
	b.click("#task-prs .merge-go")
	b.until("the refusal", `!document.querySelector('#task-prs .merge-error').hidden`)
	if got := b.str(`document.querySelector('#task-prs .merge-error').textContent`); !strings.Contains(got, "Not merged: the pull request cannot be merged now") {
		t.Fatalf("refusal %q", got)
	}
	if st, _ := gh.PR(ghOwner, ghRepo, pr.Number); st.Merged {
		t.Fatal("a refused merge merged")
	}
	yes := true
	gh.UpdatePR(ghOwner, ghRepo, pr.Number, func(p *forgetest.PullRequest) { p.Mergeable = &yes })
	b.click("#task-prs .pr-merge")
	b.click("#task-prs .merge-go")
	b.until("the merged pull request", `document.querySelector('#task-prs .pr[data-state=merged]')`)
	if st, _ := gh.PR(ghOwner, ghRepo, pr.Number); !st.Merged || st.MergeMethod != "squash" {
		t.Fatalf("on the forge: merged %v, method %q", st.Merged, st.MergeMethod)
	}
	waitFor(t, func() bool { return e.task(task.ID).WorkflowStepID == done.ID })
	b.open(fmt.Sprintf("#/?ws=%s&wf=%s", e.workspaceID(), task.WorkflowID), "board")
	b.until("the merged badge in Done", fmt.Sprintf(`document.querySelector('.card[data-id=%q]')?.dataset.step === %q && `, task.ID, done.ID)+badge+`?.dataset.state === 'merged'`)
	if v := gh.TakeViolations(); len(v) > 0 {
		t.Fatalf("requests GitHub would refuse: %v", v)
	}
}
