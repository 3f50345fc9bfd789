package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupDependencies = declare(&Group{Name: "dependencies", Tools: []*Tool{
	{
		Name:   "add_task_dependency_kandev",
		Action: kanban.ActionTaskDependencyAdd,
		Title:  "Add task dependency",
		Description: "Record that a task is blocked by another of its workspace. Self edges and cycles are refused; an " +
			"existing edge succeeds.",
		Input:  dependencyInput(),
		Output: dependencyOut,
		Hints:  IdempotentWrite,
	},
	{
		Name:        "remove_task_dependency_kandev",
		Action:      kanban.ActionTaskDependencyRemove,
		Title:       "Remove task dependency",
		Description: "Remove the edge \"task_id is blocked by depends_on_task_id\"; a missing edge succeeds.",
		Input:       dependencyInput(),
		Output:      deletedOut("The removed edge.", "The blocked task.", "Always true: the edge no longer exists."),
		Hints:       DestructiveHints,
	},
}})

// dependencyInput names an edge: task_id is blocked by depends_on_task_id.
func dependencyInput() S {
	return Obj("", P{
		"task_id":            SelfTaskRef(`The blocked task; default "self" (a session's only; required on the external endpoint).`),
		"depends_on_task_id": TaskRef("The blocking task."),
	}, "depends_on_task_id")
}

var dependencyOut = out("A dependency edge: task_id is blocked by depends_on_task_id.", P{
	"task_id":            Str("The blocked task."),
	"depends_on_task_id": Str("The blocking task."),
	"created_at":         Str("When the edge was added (RFC 3339)."),
}, "task_id", "depends_on_task_id")
