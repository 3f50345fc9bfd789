package flow

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// steps returns a workflow's steps in order.
func (h *harness) steps(workflowID string) []kanban.WorkflowStep {
	h.t.Helper()
	l, err := h.st.ListSteps(context.Background(), workflowID, kanban.Page{Limit: 50})
	if err != nil {
		h.t.Fatal(err)
	}
	return l.Items
}

// child creates a subtask (no agent) of parent on step.
func (h *harness) child(parent *kanban.Task, step kanban.WorkflowStep) *kanban.Task {
	h.t.Helper()
	var out action.TaskCreateOut
	f := false
	h.must(kanban.ActionTaskCreate, action.TaskCreateIn{WorkspaceID: h.ws, WorkflowID: step.WorkflowID, WorkflowStepID: step.ID,
		ParentID: parent.ID, Title: fmt.Sprintf("child of %s", parent.Title), StartAgent: &f}, &out)
	return out.Task
}

// TestChildrenCompleted: on_children_completed runs once the last of a
// task's subtasks ends (completed, failed or cancelled count), not while
// one is still open, and not for a state that is not an end.
func TestChildrenCompleted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"A"},{"name":"S","events":` + ev(kanban.EventChildrenCompleted, `{"type":"move_to_next"}`) + `},{"name":"N"}]`)
	a, s, n := steps[0], steps[1], steps[2]
	parent := h.task("P", s)
	c1, c2, c3 := h.child(parent, a), h.child(parent, a), h.child(parent, a)
	h.settle()
	set := func(c *kanban.Task, st kanban.TaskState) {
		h.must(kanban.ActionTaskSetState, action.TaskStateIn{TaskID: c.ID, State: st}, nil)
		h.settle()
	}
	set(c1, kanban.TaskCompleted)
	set(c2, kanban.TaskFailed)
	set(c3, kanban.TaskReview) // not an end
	if got := h.get(parent.ID).WorkflowStepID; got != s.ID {
		t.Fatalf("parent on %s with a subtask still open, want %s; records %v", got, s.ID, h.records(parent.ID))
	}
	set(c3, kanban.TaskCancelled)
	if got := h.get(parent.ID).WorkflowStepID; got != n.ID {
		t.Fatalf("parent on %s after its last subtask ended, want %s; records %v", got, n.ID, h.records(parent.ID))
	}
	if !h.hasRecord(parent.ID, "on_children_completed of S, move_to_next: ") {
		t.Fatalf("no record: %v", h.records(parent.ID))
	}
}

// TestChildrenCompletedOncePerCompletion: on_children_completed runs once
// each time the set of subtasks becomes all ended — not again when an
// ended subtask is saved again (an edit, the same state set again, a move
// between done steps that set COMPLETED), and again once a reopened one
// ends anew.
func TestChildrenCompletedOncePerCompletion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	done := `{"on_enter":[{"type":"set_state","config":{"state":"COMPLETED"}}]}`
	steps := h.workflow(`[{"name":"A"},{"name":"S","events":` + ev(kanban.EventChildrenCompleted, `{"type":"set_state","config":{"state":"REVIEW"}}`) +
		`},{"name":"D1","events":` + done + `},{"name":"D2","events":` + done + `}]`)
	a, s, d1, d2 := steps[0], steps[1], steps[2], steps[3]
	parent := h.task("P", s)
	c1, c2 := h.child(parent, a), h.child(parent, a)
	h.settle()
	set := func(c *kanban.Task, st kanban.TaskState) {
		h.must(kanban.ActionTaskSetState, action.TaskStateIn{TaskID: c.ID, State: st}, nil)
		h.settle()
	}
	fired := func(want int, after string) {
		t.Helper()
		n := 0
		for _, r := range h.records(parent.ID) {
			if strings.Contains(r, "on_children_completed of S") {
				n++
			}
		}
		if n != want {
			t.Fatalf("after %s: on_children_completed ran %d times, want %d; records %v", after, n, want, h.records(parent.ID))
		}
	}
	set(c1, kanban.TaskCompleted)
	set(c2, kanban.TaskCompleted)
	fired(1, "both subtasks completed")
	title := "renamed"
	h.must(kanban.ActionTaskUpdate, action.TaskUpdateIn{TaskID: c1.ID, Title: &title}, nil)
	h.settle()
	fired(1, "an edit of a completed subtask")
	set(c2, kanban.TaskCompleted)
	fired(1, "COMPLETED set again")
	for _, d := range []kanban.WorkflowStep{d1, d2} {
		if err := h.move(c1.ID, d.ID); err != nil {
			t.Fatal(err)
		}
		h.settle()
	}
	fired(1, "moves between done steps")
	set(c1, kanban.TaskInProgress)
	fired(1, "a subtask reopened")
	set(c1, kanban.TaskCompleted)
	fired(2, "the reopened subtask completed")
}

// TestCommentAndMergeRunTheirOwnEvents: a PR comment runs on_comment only
// and a merge on_pr_merged only, on the task's current step.
func TestCommentAndMergeRunTheirOwnEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	events := `{"on_comment":[{"type":"set_state","config":{"state":"BLOCKED"}}],"on_pr_merged":[{"type":"move_to_next"}]}`
	steps := h.workflow(`[{"name":"S","events":` + events + `},{"name":"Done"}]`)
	task := h.task("T", steps[0])
	h.events.Emit(kanban.PullRequestCommented{TaskID: task.ID, PullRequestID: "pr"})
	h.settle()
	if got := h.get(task.ID); got.State != kanban.TaskBlocked || got.WorkflowStepID != steps[0].ID {
		t.Fatalf("after a comment: state %s on %s, want BLOCKED on S", got.State, got.WorkflowStepID)
	}
	h.events.Emit(kanban.PullRequestMerged{TaskID: task.ID, PullRequestID: "pr"})
	h.settle()
	if got := h.get(task.ID).WorkflowStepID; got != steps[1].ID {
		t.Fatalf("after the merge: on %s, want Done (%s); records %v", got, steps[1].ID, h.records(task.ID))
	}
}
