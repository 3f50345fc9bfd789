package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupDependencies = declare(&Group{Name: "dependencies", Tools: []*Tool{
	{
		Action: kanban.ActionTaskDependencyAdd,
		Title:  "Add task dependency",
		Description: "Record that a task is blocked by another of its workspace. Self edges and cycles are refused; an " +
			"existing edge succeeds.",
		Output: dependencyOut,
		Hints:  IdempotentWrite,
	},
	{
		Action:      kanban.ActionTaskDependencyRemove,
		Title:       "Remove task dependency",
		Description: "Remove the edge \"task_id is blocked by depends_on_task_id\"; a missing edge succeeds.",
		Output:      deletedOut("The removed edge.", "The blocked task.", "Always true: the edge no longer exists."),
		Hints:       DestructiveHints,
	},
}})

var dependencyOut = out("A dependency edge: task_id is blocked by depends_on_task_id.", P{
	"task_id":            Str("The blocked task."),
	"depends_on_task_id": Str("The blocking task."),
	"created_at":         Str("When the edge was added (RFC 3339)."),
}, "task_id", "depends_on_task_id")
