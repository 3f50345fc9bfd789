package catalog

import (
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var _ = declare(&Group{Name: "board", Tools: []*Tool{
	{
		Name:        "list_workspaces_kandev",
		Action:      "workspace.list",
		Title:       "List workspaces",
		Description: "List the workspaces you can see (a session sees only its own). Use it to find workspace ids.",
		Input:       Obj("", PageProps(P{})),
		Output:      listOf(workspaceOut),
		Hints:       ReadHints,
	},
	{
		Name:        "list_workflows_kandev",
		Action:      "workflow.list",
		Title:       "List workflows",
		Description: "List the workflows (kanban boards) of a workspace, in display order.",
		Input: Obj("", PageProps(P{
			"workspace_id": ID("Workspace whose workflows to list."),
		}), "workspace_id"),
		Output: listOf(workflowOut),
		Hints:  ReadHints,
	},
	{
		Name:        "list_workflow_steps_kandev",
		Action:      "workflow.step.list",
		Title:       "List workflow steps",
		Description: "List a workflow's steps (board columns) in board order, with their WIP limits and automation settings.",
		Input: Obj("", PageProps(P{
			"workflow_id": ID("Workflow whose steps to list."),
		}), "workflow_id"),
		Output: listOf(stepOut),
		Hints:  ReadHints,
	},
	{
		Name:   "list_tasks_kandev",
		Action: "task.list",
		Title:  "List tasks",
		Description: "List tasks of your workspace. With workflow_step_id, tasks come in board order (position); " +
			"otherwise in creation order. Archived tasks are excluded unless include_archived is true.",
		Input: Obj("", PageProps(P{
			"workflow_id":      ID("Only tasks of this workflow."),
			"workflow_step_id": ID("Only tasks on this step, in board order."),
			"state":            Enum("Only tasks in this state.", taskStates...),
			"include_archived": Bool("Include archived tasks. Default false.").Default(false),
		})),
		Output: listOf(taskOut),
		Hints:  ReadHints,
	},
	{
		Name:        "list_agents_kandev",
		Action:      "agent.list",
		Title:       "List agents",
		Description: "List the agent types (Claude Code, Codex, ...) tasks can be started with.",
		Input:       Obj("", PageProps(P{})),
		Output:      listOf(agentOut),
		Hints:       ReadHints,
	},
	{
		Name:        "list_executor_profiles_kandev",
		Action:      "executor.profile.list",
		Title:       "List executor profiles",
		Description: "List executor profiles (how and where agents run). Use an id as executor_profile_id when creating a task.",
		Input: Obj("", PageProps(P{
			"executor_id": ID("Only profiles of this executor."),
		})),
		Output: listOf(executorProfileOut),
		Hints:  ReadHints,
	},
}})

// taskStates are the task state enum values, from the domain.
var taskStates = func() []string {
	out := make([]string, len(kanban.TaskStates))
	for i, s := range kanban.TaskStates {
		out[i] = string(s)
	}
	return out
}()
