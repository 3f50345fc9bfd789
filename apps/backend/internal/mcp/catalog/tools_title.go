package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupTaskTitle = declare(&Group{Name: "task-title", Tools: []*Tool{
	{
		Action: kanban.ActionTaskSetTitle,
		Title:  "Set task title",
		Description: "Give your task its title once you understand the work: a short summary (at most 60 characters). " +
			"Call it once, early; afterwards your session switches to task mode and this tool disappears.",
		Output: out("The retitled task and your session's new mode.", P{
			"task": taskOut,
			"mode": Str("Your session's mode afterwards: task."),
		}, "task", "mode"),
		Hints: IdempotentWrite,
	},
}})
