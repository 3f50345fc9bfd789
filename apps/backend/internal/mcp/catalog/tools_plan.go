package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// planTaskRef is the task_id of the plan tools: the bound task's tree only.
func planTaskRef() S {
	return SelfTaskRef(`Task of the plan: yours ("self", default), an ancestor or a descendant.`)
}

// planInput is the input of the plan writes: the task, a title and the
// markdown content (required).
func planInput(titleDesc, contentDesc string) S {
	return Obj("", P{
		"task_id": planTaskRef(),
		"title":   Str(titleDesc).Len(1, kanban.MaxPlanTitleLen),
		"content": Str(contentDesc).Len(1, kanban.MaxContentLen),
	}, "content")
}

var groupPlan = declare(&Group{Name: "plan", Tools: []*Tool{
	{
		Name:        "create_task_plan_kandev",
		Action:      kanban.ActionPlanCreate,
		Title:       "Create task plan",
		Description: "Write a task's first plan (markdown), revision 1. CONFLICT if it has one: use update_task_plan_kandev.",
		Input:       planInput("Plan title.", "The plan, in markdown."),
		Output:      planOut,
		Hints:       WriteHints,
	},
	{
		Name:        "get_task_plan_kandev",
		Action:      kanban.ActionPlanGet,
		Title:       "Get task plan",
		Description: "Read a task's current plan and revision; NOT_FOUND if it has none.",
		Input:       Obj("", P{"task_id": planTaskRef()}),
		Output:      planOut,
		Hints:       ReadHints,
	},
	{
		Name:        "update_task_plan_kandev",
		Action:      kanban.ActionPlanUpdate,
		Title:       "Update task plan",
		Description: "Replace a task's plan as its next revision (earlier ones are kept).",
		Input:       planInput("New title; omit to keep it.", "The whole new plan, in markdown."),
		Output:      planOut,
		Hints:       WriteHints,
	},
	{
		Name:        "delete_task_plan_kandev",
		Action:      kanban.ActionPlanDelete,
		Title:       "Delete task plan",
		Description: "Delete a task's plan and all its revisions, for good.",
		Input:       Obj("", P{"task_id": planTaskRef()}),
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
