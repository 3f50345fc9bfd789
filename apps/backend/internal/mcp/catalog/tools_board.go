package catalog

import (
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var groupBoard = declare(&Group{Name: "board", Tools: []*Tool{
	{
		Action:      kanban.ActionWorkspaceList,
		Title:       "List workspaces",
		Description: "List the workspaces you can see (a session sees only its own). Use it to find workspace ids.",
		Output:      listOf(workspaceOut),
		Hints:       ReadHints,
	},
	{
		Action:      kanban.ActionWorkflowList,
		Title:       "List workflows",
		Description: "List the workflows (kanban boards) of a workspace, in display order.",
		Output:      listOf(workflowOut),
		Hints:       ReadHints,
	},
	{
		Action:      kanban.ActionWorkflowStepList,
		Title:       "List workflow steps",
		Description: "List a workflow's steps (board columns) in board order, with their WIP limits and automation settings.",
		Output:      listOf(stepOut),
		Hints:       ReadHints,
	},
	{
		Name:   "list_tasks_kandev",
		Action: kanban.ActionTaskList,
		Drop:   []string{"workspace_id", "parent_id"},
		Title:  "List tasks",
		Description: "List tasks of your workspace: in board order with workflow_step_id, else in creation order; archived " +
			"ones only with include_archived. Items are summaries with the first 100 characters of the prompt " +
			"(description_truncated when cut); verbose gives every field and the whole prompt.",
		Output: listOf(taskItemOut),
		Hints:  ReadHints,
	},
	{
		Action:      kanban.ActionAgentList,
		Title:       "List agents",
		Description: "List the agent types (Claude Code, Codex, ...) tasks can be started with.",
		Output:      listOf(agentOut),
		Hints:       ReadHints,
	},
	{
		Name:   "list_executor_profiles_kandev",
		Action: kanban.ActionExecutorProfileList,
		Drop:   []string{"workspace_id"},
		Title:  "List executor profiles",
		Description: "List executor profiles (how and where agents run): the global ones and those of the session's " +
			"workspace. Use an id as executor_profile_id when creating a task.",
		Output: listOf(executorProfileOut),
		Hints:  ReadHints,
	},
}})

// taskItemOut is a list_tasks_kandev item: a summary, or with verbose the
// full task (taskOut's fields) with the same counts.
var taskItemOut = out("A task: a summary, or with verbose every field of the task.", P{
	"id": Str("Task id."), "workflow_step_id": Str("Current step."), "parent_id": Str("Parent task, if any."),
	"title": Str("Title."), "state": Str("Task state."), "position": Int("0-based position within the step."),
	"description":           Str("The task's prompt: its first 100 characters unless verbose; absent when empty."),
	"description_truncated": Bool("The prompt was cut (summaries only); absent when it was not."),
	"archived_at":           Str("When archived (RFC 3339); absent when active."),
	"queued_for_step_id":    Str("The full step the task waits to enter (admission queue); absent when not waiting."),
	"queued_at":             Str("Since when it waits (RFC 3339)."),
	"subtasks":              Int("Subtasks that are not archived; absent when none."),
	"open_blockers":         Int("Tasks this task depends on that are not COMPLETED; absent when none."),
}, "id", "workflow_step_id", "title", "state", "position")
