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
