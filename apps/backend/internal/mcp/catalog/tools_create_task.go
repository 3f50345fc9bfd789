package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupCreateTask = declare(&Group{Name: "create-task", Tools: []*Tool{createTaskTool}})

var createTaskTool = &Tool{
	Action: kanban.ActionTaskCreate,
	Title:  "Create task",
	Description: "Create a task on a workflow step and, unless start_agent is false, start an agent on it with prompt as its " +
		"instructions. With external_id a retry is safe: the same key returns the existing task, deduplicated=true.",
	Output: out("The created (or deduplicated) task.", P{
		"task":         taskOut,
		"deduplicated": Bool("True when external_id matched an existing task and nothing was created."),
		"session_id":   Str("The agent session started on the task, if any."),
	}, "task", "deduplicated"),
	Hints: WriteHints,
}
