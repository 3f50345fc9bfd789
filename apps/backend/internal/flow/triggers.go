package flow

import (
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The step events that come from outside the board's own moves: a
// reviewer's comment on a task's pull request (on_comment), the merge of
// one (on_pr_merged), and the end of the last of a task's subtasks
// (on_children_completed). Each runs the automations of the task's
// current step for that event, in order with the task's other work.

// commented runs on_comment for a task commented on (a task comment, or
// a comment on its pull request).
func (e *Engine) commented(taskID, detail string) {
	c := eventCause(detail)
	e.do(taskKey(taskID), func() { e.run(taskID, "", kanban.EventComment, c, nil) })
}

// failed runs on_agent_error for a task one of whose agent sessions
// failed.
func (e *Engine) failed(taskID string) {
	c := eventCause("")
	e.do(taskKey(taskID), func() { e.run(taskID, "", kanban.EventAgentError, c, nil) })
}

// budgetAlert runs on_budget_alert for the task whose turn pushed a
// budget across a threshold (the store fires each once); the agents it
// wakes are told which budget and how far it is spent.
func (e *Engine) budgetAlert(ev kanban.BudgetAlert) {
	c := eventCause(kanban.BudgetAlertText(ev))
	e.do(taskKey(ev.TaskID), func() { e.run(ev.TaskID, "", kanban.EventBudgetAlert, c, nil) })
}

// resolved runs on_approval_resolved on the step whose participants
// reached its quorum (the task has moved on from it).
func (e *Engine) resolved(ev kanban.ApprovalResolved) {
	c := eventCause("")
	e.do(taskKey(ev.TaskID), func() { e.run(ev.TaskID, ev.StepID, kanban.EventApprovalResolved, c, nil) })
}

// merged runs on_pr_merged for a task whose pull request was merged.
func (e *Engine) merged(taskID string) {
	c := eventCause("")
	e.do(taskKey(taskID), func() { e.run(taskID, "", kanban.EventPRMerged, c, nil) })
}

// ended runs on_children_completed for the parent of a task that ended
// when every one of the parent's subtasks (archived ones included) has
// ended and this one is the last of them to have changed: of several
// subtasks ending at once, each reaction sees them all ended, and only
// the latest one's fires, so the event fires once. A parent with more
// subtasks than one page lists is checked over all of them; a read that
// fails runs nothing.
func (e *Engine) ended(t *kanban.Task) {
	if t == nil || t.ParentID == "" || !t.State.Ended() {
		return
	}
	child, parent, ws, c := t.ID, t.ParentID, t.WorkspaceID, eventCause("")
	e.do(taskKey(parent), func() {
		if last, ok := e.childrenEnded(ws, parent); ok && last == child {
			e.run(parent, "", kanban.EventChildrenCompleted, c, nil)
		}
	})
}

// childrenEnded reports whether every subtask of parent has ended, and
// which changed last (by update time, then id).
func (e *Engine) childrenEnded(workspaceID, parent string) (string, bool) {
	page := kanban.Page{Limit: kanban.MaxLimit}
	var last *kanban.Task
	for range maxChildPages {
		l, err := e.store.ListTasks(e.ctx, kanban.TaskFilter{WorkspaceID: workspaceID, ParentID: parent, IncludeArchived: true}, page)
		if err != nil {
			return "", false
		}
		for i := range l.Items {
			c := &l.Items[i]
			if !c.State.Ended() {
				return "", false
			}
			if last == nil || c.UpdatedAt.After(last.UpdatedAt) || c.UpdatedAt.Equal(last.UpdatedAt) && c.ID > last.ID {
				last = c
			}
		}
		if l.NextCursor == "" {
			if last == nil {
				return "", false
			}
			return last.ID, true
		}
		page.Cursor = l.NextCursor
	}
	return "", false // more subtasks than checked: do not claim they all ended
}

// maxChildPages bounds the pages of subtasks read to decide
// on_children_completed (kanban.MaxLimit each).
const maxChildPages = 50
