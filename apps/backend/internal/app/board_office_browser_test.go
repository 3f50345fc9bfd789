package app

import (
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardOfficeApproval: on the Office template's Approval step, whose
// participant is the operator, the task page takes a comment (shown in
// the conversation) and the operator's approval, which moves the task to
// Done; there the decision form is gone.
func TestBoardOfficeApproval(t *testing.T) {
	e := newEnv(t)
	_, steps := e.fromTemplate("office-default", "Office")
	var out action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Approve me", "workflow_id": steps["Approval"].WorkflowID,
		"workflow_step_id": steps["Approval"].ID, "start_agent": false}, &out)
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+out.Task.ID, "task")
	b.until("the comment form", `document.querySelector('#comment-form')`)
	b.set("#comment-form [name=body]", "Looks ready to me.")
	b.click("#comment-form button.primary")
	b.until("the comment in the conversation", `[...document.querySelectorAll('.msg.type-comment')].some((m) => m.textContent.includes('Looks ready to me.'))`)
	b.until("the decision form", `document.querySelector('#decide-form')`)
	b.set("#decide-form [name=reason]", "Ship it.")
	b.click("#decide-form button.primary")
	waitFor(t, func() bool { return e.task(out.Task.ID).WorkflowStepID == steps["Done"].ID })
	b.until("the decision form gone on Done", `!document.querySelector('#decide-form')`)
	if n := dbStr(e, `SELECT COUNT(*) FROM task_comments`); n != "1" {
		t.Fatalf("%s comments, want 1", n)
	}
}

// TestBoardApprovalsInbox: with a task on each of the Office template's
// Review and Approval steps (both list the operator), the navigation
// counts 2 approvals; #/approvals shows both; rejecting the Review one
// sends it back to Work and approving the other moves it to Done, each
// card leaving the view and the count going down to none.
func TestBoardApprovalsInbox(t *testing.T) {
	e := newEnv(t)
	_, steps := e.fromTemplate("office-default", "Office")
	ids := map[string]string{}
	for _, name := range []string{"Review", "Approval"} {
		var out action.TaskCreateOut
		e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "On " + name, "workflow_id": steps[name].WorkflowID,
			"workflow_step_id": steps[name].ID, "start_agent": false}, &out)
		ids[name] = out.Task.ID
	}
	b := newTab(t, e)
	b.signIn()
	b.open("#/approvals", "approvals")
	b.until("the count of 2", `document.getElementById('approvals-count').textContent === '2' && !document.getElementById('approvals-count').hidden`)
	b.until("both cards", `document.querySelectorAll('#approvals article.approval').length === 2`)
	card := func(name string) string { return `#approvals article[data-task="` + ids[name] + `"]` }
	b.set(card("Review")+" [name=reason]", "Needs tests.")
	b.click(card("Review") + " button.reject")
	waitFor(t, func() bool { return e.task(ids["Review"]).WorkflowStepID == steps["Work"].ID })
	b.until("the Review card gone", `!document.querySelector('`+card("Review")+`') && document.querySelectorAll('#approvals article.approval').length === 1`)
	b.set(card("Approval")+" [name=reason]", "Ship it.")
	b.click(card("Approval") + " button.primary")
	waitFor(t, func() bool { return e.task(ids["Approval"]).WorkflowStepID == steps["Done"].ID })
	b.until("no card left", `document.querySelectorAll('#approvals article.approval').length === 0 && !document.querySelector('[data-empty=approvals]').hidden`)
	b.until("no count", `document.getElementById('approvals-count').hidden`)
}
