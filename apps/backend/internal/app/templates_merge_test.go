package app

import (
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestTemplatesMoveOnMerge: on the seeded board and on every template with
// a review or pull request step, the merge of a task's pull request (the
// watcher's kanban.PullRequestMerged, as internal/app's PR sink emits it)
// moves the task to Done, which completes it; a step without an
// on_pr_merged rule (Kanban's Backlog, Architecture's Review: designs have
// no pull request) keeps the task where it is.
func TestTemplatesMoveOnMerge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seeded := seededSteps(e)
	for _, tc := range []struct {
		name       string
		steps      map[string]kanban.WorkflowStep
		from, done string // done empty: the task stays on from
	}{
		{"seeded board", seeded, "Review", "Done"},
		{"seeded board's Backlog", seeded, "Backlog", ""},
		{"kanban", e.templateSteps("kanban"), "Review", "Done"},
		{"plan-and-build", e.templateSteps("plan-and-build"), "Review", "Done"},
		{"pr-review", e.templateSteps("pr-review"), "Waiting", "Done"},
		{"architecture", e.templateSteps("architecture"), "Review", ""},
	} {
		from := tc.steps[tc.from]
		var out action.TaskCreateOut
		f := false
		e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: "Merged " + tc.name, WorkflowID: from.WorkflowID,
			WorkflowStepID: from.ID, StartAgent: &f}, &out)
		e.settleFlow()
		e.b.events.Emit(kanban.PullRequestMerged{TaskID: out.Task.ID, PullRequestID: kanban.NewID()})
		if tc.done == "" {
			e.settleFlow()
			if got := stepOf(e, out.Task.ID); got != from.ID {
				t.Errorf("%s: a merge moved the task from %s to %s", tc.name, tc.from, got)
			}
			continue
		}
		e.waitStep(out.Task.ID, tc.steps[tc.done])
		e.waitTask(out.Task.ID, kanban.TaskCompleted)
	}
}

// templateSteps creates a workflow from a template and returns its steps.
func (e *env) templateSteps(id string) map[string]kanban.WorkflowStep {
	e.t.Helper()
	_, steps := e.fromTemplate(id, "Merges on "+id)
	return steps
}
