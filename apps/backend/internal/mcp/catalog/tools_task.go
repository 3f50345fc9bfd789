package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// writeReachNote says which tasks a task-mode session may change (the
// action layer's write scope, --session-scope).
const writeReachNote = " From task mode you change only your task, its subtasks and the tasks you created (with their " +
	"subtasks), unless the operator set --session-scope workspace; you read every task of your workspace."

var groupTaskLifecycle = declare(&Group{Name: "task-lifecycle", Tools: []*Tool{
	{
		Name:   "move_task_kandev",
		Action: kanban.ActionTaskMove,
		Title:  "Move task",
		Description: "Move a task to another step (column) of its workflow, or of another workflow of its workspace " +
			"named in workflow_id, or reorder it in its step. CONFLICT when the step's wip_limit is reached. prompt is " +
			"queued as its running agent's next turn, else the first message of its next agent." + writeReachNote,
		Input: Obj("", P{
			"task_id":          TaskRef(`Task to move; "self" is yours.`),
			"workflow_id":      ID("Workflow of the target step; default the task's."),
			"workflow_step_id": ID("Target step, of workflow_id."),
			"position": Int("0-based position in the step; default last.").
				Range(0, kanban.MaxTaskPosition),
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
			"A session cannot delete its own task." + writeReachNote,
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
			"its history. Archiving an archived task succeeds and keeps the first archived_at." + writeReachNote,
		Input: Obj("", P{
			"task_id": TaskRef(`Task to archive; "self" is yours.`),
		}, "task_id"),
		Output: taskOut,
		Hints:  IdempotentWrite,
	},
}})

var groupTaskUpdate = declare(&Group{Name: "task-update", Tools: []*Tool{
	{
		Name:   "update_task_kandev",
		Action: kanban.ActionTaskUpdate,
		Title:  "Update task",
		Description: "Change a task's title, description (its prompt), state or deferred launch prompt; only what you " +
			"pass changes." + writeReachNote,
		Input: Obj("", P{
			"task_id":     TaskRef(`Task to update; "self" is yours.`),
			"title":       Str("New title.").Len(1, kanban.MaxTitleLen),
			"description": Str("New description: the prompt its agents get.").Len(0, kanban.MaxPromptLen),
			"state":       Enum("New state (lowercase and aliases such as done are accepted).", taskStates...),
			"deferred_launch_prompt": Str("New prompt for the agent a task waiting on its blockers will start; CONFLICT once "+
				"it started (use message_task_kandev).").Len(1, kanban.MaxPromptLen),
		}, "task_id"),
		Output:       taskOut,
		Hints:        IdempotentWrite,
		Aliases:      []Alias{{From: "prompt", To: "description"}},
		ValueAliases: stateAliases,
	},
}})
