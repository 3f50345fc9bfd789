package app

import (
	"fmt"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardIgnoresStaleTaskSnapshot: a task's events can reach the board
// out of commit order (a run's state change published after the engine's
// move that followed it); a snapshot older than the card's never moves the
// card back.
func TestBoardIgnoresStaleTaskSnapshot(t *testing.T) {
	e := newEnv(t)
	steps := seededSteps(e)
	a := e.newTask("Moved ahead")
	sentinel := e.newTask("Sentinel")
	b := newTab(t, e)
	b.signIn()
	inColumn := func(id, step string) string {
		return fmt.Sprintf(`document.querySelector('.card[data-id=%q]')?.closest('.column')?.dataset.step === %q`, id, step)
	}
	b.until("the card in Backlog", inColumn(a.ID, steps["Backlog"].ID))
	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: a.ID, WorkflowStepID: steps["Done"].ID}, nil)
	b.until("the card in Done", inColumn(a.ID, steps["Done"].ID))

	// The creation snapshot (Backlog, an older updated_at) arrives late,
	// then a later event of another task marks that it was handled: one
	// connection's events are delivered in order.
	e.b.ws.Publish(action.WorkspaceTopic(a.WorkspaceID), kanban.EventTaskUpdated.Name(), a)
	title := "Sentinel renamed"
	e.dispatch(kanban.ActionTaskUpdate, action.TaskUpdateIn{TaskID: sentinel.ID, Title: &title}, nil)
	b.until("the sentinel's new title", fmt.Sprintf(`document.querySelector('.card[data-id=%q] .title')?.textContent === %q`, sentinel.ID, title))
	var back bool
	b.js(inColumn(a.ID, steps["Done"].ID), &back)
	if !back {
		t.Fatalf("a stale snapshot moved the card out of Done: %s", b.str(fmt.Sprintf(`document.querySelector('.card[data-id=%q]')?.closest('.column')?.dataset.step || 'gone'`, a.ID)))
	}
}
