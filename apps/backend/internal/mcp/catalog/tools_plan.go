package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupPlan = declare(&Group{Name: "plan", Tools: []*Tool{
	{
		Action:      kanban.ActionPlanCreate,
		Title:       "Create task plan",
		Description: "Write a task's first plan (markdown), revision 1. CONFLICT if it has one: use update_task_plan_kandev.",
		Output:      planOut,
		Hints:       WriteHints,
	},
	{
		Action:      kanban.ActionPlanGet,
		Title:       "Get task plan",
		Description: "Read a task's current plan and revision; NOT_FOUND if it has none.",
		Output:      planOut,
		Hints:       ReadHints,
	},
	{
		Action:      kanban.ActionPlanUpdate,
		Title:       "Update task plan",
		Description: "Replace a task's plan as its next revision (earlier ones are kept).",
		Output:      planOut,
		Hints:       WriteHints,
	},
	{
		Action:      kanban.ActionPlanDelete,
		Title:       "Delete task plan",
		Description: "Delete a task's plan and all its revisions, for good.",
		Output:      deletedOut("The task whose plan was deleted.", "The task id.", "Always true: the plan is gone."),
		Hints:       DestructiveHints,
	},
}})

var planOut = out("A task's plan.", P{
	"task_id":    Str("The task."),
	"title":      Str("Plan title."),
	"content":    Str("The plan, in markdown."),
	"revision":   Int("Revision number, 1 for the first."),
	"created_by": Str("Who wrote the current revision: agent or operator."),
	"created_at": Str("When the plan was created (RFC 3339)."),
	"updated_at": Str("When the current revision was written (RFC 3339)."),
}, "task_id", "content", "revision")
