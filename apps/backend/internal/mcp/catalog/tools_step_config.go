package catalog

import (
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var stepOutList = out("The workflow's steps in their new board order.", P{
	"items": Arr("Every step of the workflow, in board order.", stepOut),
}, "items")

// stepConfigTools are the step tools of the config-workflows group.
var stepConfigTools = []*Tool{
	{
		Action:      kanban.ActionWorkflowStepCreate,
		Title:       "Create workflow step",
		Description: "Add a step (board column) to a workflow, last or at position; a workflow's first step is its start step.",
		Output:      stepOut,
		Hints:       WriteHints,
	},
	{
		Action:      kanban.ActionWorkflowStepUpdate,
		Title:       "Update workflow step",
		Description: "Change a workflow step's settings; only the fields you give change.",
		Output:      stepOut,
		Hints:       IdempotentWrite,
	},
	{
		Action:      kanban.ActionWorkflowStepDelete,
		Title:       "Delete workflow step",
		Description: "Permanently delete a workflow step. Refused while any task (archived included) is on it; move them first.",
		Output:      deletionOut,
		Hints:       DestructiveHints,
	},
	{
		Action:      kanban.ActionWorkflowStepReorder,
		Title:       "Reorder workflow steps",
		Description: "Set the board order of a workflow's steps. step_ids must list every step of the workflow exactly once.",
		Output:      stepOutList,
		Hints:       IdempotentWrite,
	},
}
