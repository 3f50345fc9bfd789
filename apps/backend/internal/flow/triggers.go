package flow

import (
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The step events that come from outside the board's own moves: a
// reviewer's comment on a task's pull request (on_comment), the merge of
// one (on_pr_merged), and the end of the last of a task's subtasks
// (on_children_completed). Each runs the automations of the task's
// current step for that event, in order with the task's other work.

// commented runs on_comment for a task whose pull request was commented on.
func (e *Engine) commented(taskID string) {
	e.do(taskKey(taskID), func() { e.run(taskID, "", kanban.EventComment, cause{}, nil) })
}

// merged runs on_pr_merged for a task whose pull request was merged.
func (e *Engine) merged(taskID string) {
	e.do(taskKey(taskID), func() { e.run(taskID, "", kanban.EventPRMerged, cause{}, nil) })
}

// ended runs on_children_completed for the parent of a task that ended
// when every one of the parent's subtasks (archived ones included) has
// ended. A parent with more subtasks than one page lists is checked over
// all of them; a read that fails runs nothing.
func (e *Engine) ended(t *kanban.Task) {
	if t == nil || t.ParentID == "" || !t.State.Ended() {
		return
	}
	parent, ws := t.ParentID, t.WorkspaceID
	e.do(taskKey(parent), func() {
		if e.childrenEnded(ws, parent) {
			e.run(parent, "", kanban.EventChildrenCompleted, cause{}, nil)
		}
	})
}

// childrenEnded reports whether every subtask of parent has ended.
func (e *Engine) childrenEnded(workspaceID, parent string) bool {
	page := kanban.Page{Limit: kanban.MaxLimit}
	for range maxChildPages {
		l, err := e.store.ListTasks(e.ctx, kanban.TaskFilter{WorkspaceID: workspaceID, ParentID: parent, IncludeArchived: true}, page)
		if err != nil {
			return false
		}
		for _, c := range l.Items {
			if !c.State.Ended() {
				return false
			}
		}
		if l.NextCursor == "" {
			return true
		}
		page.Cursor = l.NextCursor
	}
	return false // more subtasks than checked: do not claim they all ended
}

// maxChildPages bounds the pages of subtasks read to decide
// on_children_completed (kanban.MaxLimit each).
const maxChildPages = 50
