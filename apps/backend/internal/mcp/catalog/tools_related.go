package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupRelated = declare(&Group{Name: "related", Tools: []*Tool{
	{
		Action: kanban.ActionTaskRelated,
		Title:  "List related tasks",
		Description: "Show a task's parent, children, siblings, blockers and the tasks it blocks (archived children and " +
			"siblings left out). Each list holds at most limit tasks; truncated names the lists that had more.",
		Output: out("The task and its related tasks.", P{
			"task":      relatedTaskOut,
			"parent":    relatedTaskOut,
			"children":  Arr("Subtasks of the task.", relatedTaskOut),
			"siblings":  Arr("Other subtasks of the task's parent.", relatedTaskOut),
			"blockers":  Arr("Tasks the task depends on.", relatedTaskOut),
			"blocked":   Arr("Tasks that depend on the task.", relatedTaskOut),
			"truncated": Arr("Names of the lists cut at limit.", Enum("A list name.", kanban.RelatedLists...)),
		}, "task", "children", "siblings", "blockers", "blocked", "truncated"),
		Hints: ReadHints,
	},
}})

var relatedTaskOut = out("A related task.", P{
	"id": Str("Task id."), "title": Str("Title."), "state": Str("Task state."),
	"workflow_step_id": Str("Current step."), "parent_id": Str("Parent task, if any."),
	"description":           Str("The task's prompt (verbose only, cut at 2000 characters)."),
	"description_truncated": Bool("The prompt was cut (verbose only); absent when it was not."),
}, "id", "title", "state", "workflow_step_id")
