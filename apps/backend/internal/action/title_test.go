package action

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestSetTitleSwitchesMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("Untitled")
	pending := h.session(task, kanban.ModeTaskTitlePending)
	h.refuse(pending, kanban.ActionTaskSetTitle, SetTitleIn{Title: "two\nlines"}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionTaskSetTitle, SetTitleIn{Title: "x"}, kanban.CodeForbidden)

	out := call[SetTitleOut](h, pending, kanban.ActionTaskSetTitle, SetTitleIn{Title: "Fix the parser"})
	if out.Task.Title != "Fix the parser" || out.Mode != kanban.ModeTask {
		t.Errorf("task.set_title: got %+v, want the new title and mode task", out)
	}
	if !h.pub.has(SessionTopic(pending.SessionID), kanban.EventSessionModeChanged.Name()) {
		t.Errorf("session.mode_changed: not published to the session")
	}
	if msg := h.refuse(pending, kanban.ActionTaskSetTitle, SetTitleIn{Title: "Again"}, kanban.CodeForbidden); !strings.Contains(msg, "task-title-pending") {
		t.Errorf("second task.set_title: got %q, want the pending-mode rule", msg)
	}
}
