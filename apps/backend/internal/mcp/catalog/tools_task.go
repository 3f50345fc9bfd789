package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// maxTaskPosition bounds a 0-based board position (larger values mean the end).
const maxTaskPosition = 1_000_000

var _ = declare(&Group{Name: "task-lifecycle", Tools: []*Tool{
	{
		Name:   "move_task_kandev",
		Action: "task.move",
		Title:  "Move task",
		Description: "Move a task to another step (column) of its workflow, or reorder it within its step. Fails with " +
			"CONFLICT when the target step's wip_limit is already reached. Use list_workflow_steps_kandev to find step ids.",
		Input: Obj("", P{
			"task_id":          TaskRef(`Task to move; "self" is your own task (sessions only).`),
			"workflow_step_id": ID("Target step; must belong to the task's workflow."),
			"position": Int("0-based position within the target step; omitted or past the end means last.").
				Range(0, maxTaskPosition),
		}, "task_id", "workflow_step_id"),
		Output: taskOut,
		Hints:  IdempotentWrite,
		Run:    forwardID("task_id"),
	},
	{
		Name:   "delete_task_kandev",
		Action: "task.delete",
		Title:  "Delete task",
		Description: "Permanently delete a task with its sessions, conversation, plan, documents and artifacts; its " +
			"subtasks are kept and detached. This cannot be undone: prefer archive_task_kandev to hide finished work. " +
			"A session cannot delete its own task.",
		Input: Obj("", P{
			"task_id": ID("Task to delete."),
		}, "task_id"),
		Output: deletedOut("The deleted task.", "Id of the deleted task.", "Always true: the task is gone."),
		Hints:  DestructiveHints,
		Run:    forwardID("task_id"),
	},
	{
		Name:   "archive_task_kandev",
		Action: "task.archive",
		Title:  "Archive task",
		Description: "Archive a task: it leaves the board (list_tasks_kandev hides it unless include_archived) but keeps " +
			"its history. Archiving an archived task succeeds and keeps the first archived_at.",
		Input: Obj("", P{
			"task_id": TaskRef(`Task to archive; "self" is your own task (sessions only).`),
		}, "task_id"),
		Output: taskOut,
		Hints:  IdempotentWrite,
		Run:    forwardID("task_id"),
	},
}})

var _ = declare(&Group{Name: "task-update", Tools: []*Tool{
	{
		Name:   "update_task_kandev",
		Action: "task.update",
		Title:  "Update task",
		Description: "Change a task's title, prompt (its description), state or deferred launch prompt. Only the " +
			"fields you pass change. Use move_task_kandev to change its step.",
		Input: Obj("", P{
			"task_id": TaskRef(`Task to update; "self" is your own task.`),
			"title":   Str("New title, at most 60 characters.").Len(1, kanban.MaxTitleLen),
			"prompt":  Str("New prompt: the instructions for agents working on the task (stored as its description).").Len(0, kanban.MaxPromptLen),
			"state":   Enum("New lifecycle state.", taskStates...),
			"launch_prompt": Str("Prompt kept for a later launch of the task's agent (deferred start); empty clears it.").
				Len(0, kanban.MaxPromptLen),
		}, "task_id"),
		Output: taskOut,
		Hints:  IdempotentWrite,
		Run:    forwardRenamed(map[string]string{"task_id": "id", "prompt": "description"}),
	},
}})
