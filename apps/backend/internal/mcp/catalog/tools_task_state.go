package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupTaskState = declare(&Group{Name: "task-state", Tools: []*Tool{
	{
		Action: kanban.ActionTaskSetState,
		Title:  "Update task state",
		Description: "Set a task's lifecycle state (e.g. mark it BLOCKED or COMPLETED) without moving it between steps. " +
			"Use move_task_kandev to change its step.",
		Output: taskOut,
		Hints:  IdempotentWrite,
	},
}})
