package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// writeReachNote says which tasks a task-mode session may change (the
// action layer's write scope, --session-scope).
const writeReachNote = " Task mode changes only your task, tasks you created and their subtasks (any, under --session-scope workspace)."

var groupTaskLifecycle = declare(&Group{Name: "task-lifecycle", Tools: []*Tool{
	{
		Action: kanban.ActionTaskMove,
		Title:  "Move task",
		Description: "Move a task to another step (column) of its workflow, or of another workflow of its workspace " +
			"named in workflow_id, or reorder it in its step. CONFLICT when the step's wip_limit is reached. prompt is " +
			"queued as its running agent's next turn, else the first message of its next agent." + writeReachNote,
		Output: taskOut,
		Hints:  IdempotentWrite,
	},
	{
		Action: kanban.ActionTaskDelete,
		Title:  "Delete task",
		Description: "Permanently delete a task with its sessions, conversation, plan, documents and artifacts; its " +
			"subtasks are kept and detached. This cannot be undone: prefer archive_task_kandev to hide finished work. " +
			"A session cannot delete its own task." + writeReachNote,
		Output: deletedOut("The deleted task.", "Id of the deleted task.", "Always true: the task is gone."),
		Hints:  DestructiveHints,
	},
	{
		Action: kanban.ActionTaskArchive,
		Title:  "Archive task",
		Description: "Archive a task: it leaves the board (list_tasks_kandev hides it unless include_archived) but keeps " +
			"its history. Archiving an archived task succeeds and keeps the first archived_at." + writeReachNote,
		Output: taskOut,
		Hints:  IdempotentWrite,
	},
}})

var groupTaskUpdate = declare(&Group{Name: "task-update", Tools: []*Tool{
	{
		Name:   "update_task_kandev",
		Action: kanban.ActionTaskUpdate,
		// The profiles a task's later agents start with are the operator's
		// to change (task.update over WebSocket or the CLI; the board).
		Drop:  []string{"agent_profile_id", "executor_profile_id"},
		Title: "Update task",
		Description: "Change a task's title, description (its prompt), state or deferred launch prompt; only what you " +
			"pass changes." + writeReachNote,
		Output: taskOut,
		Hints:  IdempotentWrite,
	},
}})
