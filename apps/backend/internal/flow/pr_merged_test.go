package flow

import (
	"fmt"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// A merged pull request runs the on_pr_merged automations of the step the
// task is on (here: to Done); a task on a step without them stays.
func TestPRMergedMovesTask(t *testing.T) {
	h := newHarness(t, t.TempDir())
	steps := h.workflow(fmt.Sprintf(`[{"name":"Review","events":%s},{"name":"Other"},{"name":"Done"}]`,
		ev(kanban.EventPRMerged, `{"type":"move_to_step","config":{"step_position":2}}`)))
	task := h.task("ship", steps[0])
	still := h.task("stays", steps[1])
	h.events.Emit(kanban.PullRequestMerged{TaskID: task.ID, PullRequestID: "pr1"})
	h.events.Emit(kanban.PullRequestMerged{TaskID: still.ID, PullRequestID: "pr2"})
	h.settle()
	if got := h.get(task.ID).WorkflowStepID; got != steps[2].ID {
		t.Fatalf("the merged task is on %s, want Done", got)
	}
	if !h.hasRecord(task.ID, kanban.EventPRMerged+" of Review, move_to_step") {
		t.Fatalf("no record of the automation: %v", h.records(task.ID))
	}
	if got := h.get(still.ID).WorkflowStepID; got != steps[1].ID {
		t.Fatal("a task on a step without on_pr_merged moved")
	}
}
