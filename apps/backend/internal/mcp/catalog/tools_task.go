package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// maxTaskPosition bounds a 0-based board position (larger values mean the end).
const maxTaskPosition = 1_000_000

var _ = declare(&Group{Name: "task-lifecycle", Tools: []*Tool{
	{
		Name:   "move_task_kandev",
		Action: kanban.ActionTaskMove,
		Title:  "Move task",
		Description: "Move a task to another step (column) of its workflow — or of another workflow of its workspace, " +
			"naming it in workflow_id — or reorder it within its step. Fails with CONFLICT when the target step's " +
			"wip_limit is already reached. Use list_workflow_steps_kandev to find step ids. prompt hands context to the " +
			"agent at the new step: queued as the task's running agent's next turn, else the first message of the next " +
			"agent started on it.",
		Input: Obj("", P{
			"task_id":          TaskRef(`Task to move; "self" is your own task (sessions only).`),
			"workflow_id":      ID("Workflow of the target step. Default: the task's own; another workflow of its workspace moves the task there."),
			"workflow_step_id": ID("Target step; must belong to workflow_id (default: the task's workflow)."),
			"position": Int("0-based position within the target step; omitted or past the end means last.").
				Range(0, maxTaskPosition),
			"prompt": Str("Hand-off message for the agent at the new step.").Len(1, kanban.MaxPromptLen),
		}, "task_id", "workflow_step_id"),
		Output: taskOut,
		Hints:  IdempotentWrite,
	},
	{
		Name:   "delete_task_kandev",
		Action: kanban.ActionTaskDelete,
		Title:  "Delete task",
		Description: "Permanently delete a task with its sessions, conversation, plan, documents and artifacts; its " +
			"subtasks are kept and detached. This cannot be undone: prefer archive_task_kandev to hide finished work. " +
			"A session cannot delete its own task.",
		Input: Obj("", P{
			"task_id": ID("Task to delete."),
		}, "task_id"),
		Output: deletedOut("The deleted task.", "Id of the deleted task.", "Always true: the task is gone."),
		Hints:  DestructiveHints,
	},
	{
		Name:   "archive_task_kandev",
		Action: kanban.ActionTaskArchive,
		Title:  "Archive task",
		Description: "Archive a task: it leaves the board (list_tasks_kandev hides it unless include_archived) but keeps " +
			"its history. Archiving an archived task succeeds and keeps the first archived_at.",
		Input: Obj("", P{
			"task_id": TaskRef(`Task to archive; "self" is your own task (sessions only).`),
		}, "task_id"),
		Output: taskOut,
		Hints:  IdempotentWrite,
	},
}})

var _ = declare(&Group{Name: "task-update", Tools: []*Tool{
	{
		Name:   "update_task_kandev",
		Action: kanban.ActionTaskUpdate,
		Title:  "Update task",
		Description: "Change a task's title, description (its prompt), state or deferred launch prompt. Only the " +
			"fields you pass change. Use move_task_kandev to change its step.",
		Input: Obj("", P{
			"task_id":     TaskRef(`Task to update; "self" is your own task.`),
			"title":       Str("New title, at most 60 characters.").Len(1, kanban.MaxTitleLen),
			"description": Str("New description: the prompt agents working on the task get.").Len(0, kanban.MaxPromptLen),
			"state":       Enum("New lifecycle state (lowercase and aliases such as done or in_progress are accepted).", taskStates...),
			"deferred_launch_prompt": Str("Replace the prompt a task waiting on its blockers (created with blocked_by and "+
				"start_when_unblocked) will launch its agent with; refused (CONFLICT, and nothing else changes) once its "+
				"agent started: send new context with message_task_kandev instead.").Len(1, kanban.MaxPromptLen),
		}, "task_id"),
		Output:       taskOut,
		Hints:        IdempotentWrite,
		Aliases:      []Alias{{From: "prompt", To: "description"}},
		ValueAliases: stateAliases,
	},
}})
