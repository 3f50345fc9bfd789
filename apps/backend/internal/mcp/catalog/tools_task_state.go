package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupTaskState = declare(&Group{Name: "task-state", Tools: []*Tool{
	{
		Name:   "update_task_state_kandev",
		Action: kanban.ActionTaskSetState,
		Title:  "Update task state",
		Description: "Set a task's lifecycle state (e.g. mark it BLOCKED or COMPLETED) without moving it between steps. " +
			"Use move_task_kandev to change its step.",
		Input: Obj("", P{
			"task_id": TaskRef(`Task to change; "self" is your own task (sessions only).`),
			"state":   Enum("The new state (lowercase and the reference product's aliases such as done or in_progress are accepted).", taskStates...),
		}, "task_id", "state"),
		Output:       taskOut,
		Hints:        IdempotentWrite,
		ValueAliases: stateAliases,
	},
}})
