package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var _ = declare(&Group{Name: "create-task", Tools: []*Tool{createTaskTool}})

var createTaskTool = &Tool{
	Name:   "create_task_kandev",
	Action: kanban.ActionTaskCreate,
	Title:  "Create task",
	Description: "Create a task on a workflow step and, unless start_agent is false, start an agent session on it with prompt as " +
		"its instructions. Defaults: your task's workspace and workflow (or the workspace's first workflow), at its start step. " +
		"Set external_id to make retries safe: a repeat with the same key returns the existing task with deduplicated=true.",
	Input: Obj("", P{
		"title":               Str("Short task title shown on the board, at most 60 characters.").Len(1, kanban.MaxTitleLen),
		"prompt":              Str("Instructions delivered to the agent started on the task; also stored as the task's description.").Len(0, kanban.MaxPromptLen),
		"parent_id":           TaskRef(`Parent task id; "self" makes the new task a subtask of your task.`),
		"workspace_id":        ID("Workspace for the task. Default: your task's workspace, else the first workspace."),
		"workflow_id":         ID("Workflow for the task. Default: your task's workflow, else the workspace's first workflow."),
		"workflow_step_id":    ID("Step to create the task on. Default: the workflow's start step."),
		"agent_profile_id":    ID("Agent profile for the started session. Default: the default profile."),
		"executor_profile_id": ID("Executor profile for the started session. Default: the default profile."),
		"start_agent":         Bool("Start an agent session on the task (its id is returned). Default true.").Default(true),
		"repository_id":       ID("Repository to work in. Give at most one of repository_id, local_path, repository_url."),
		"local_path":          Str("Local checkout path of the repository to work in (registered in the workspace if new).").Len(1, 4096),
		"repository_url":      Str("Remote URL of the repository to work in (registered in the workspace if new).").Len(1, 2048),
		"base_branch":         Str("Branch to start from. Default: the repository's default branch.").Len(1, 255),
		"external_id":         Str("Idempotency key, unique per workspace: a retry with the same key returns the same task.").Len(1, 200),
		"blocked_by": Arr(`Task ids this task depends on ("self" allowed); they must be in the same workspace.`,
			TaskRef("A blocking task id.")).Items(0, 50).Unique(),
		"start_when_unblocked": Bool("Start the agent only once every blocking task is completed (with start_agent, it " +
			"records that intent instead of starting now). Default: true when blocked_by is non-empty, else false; pass " +
			"false to create the dependencies with no automatic start."),
		"autopilot": Bool("Run the task in autopilot: its agent never asks the operator; as a subtask it asks its direct " +
			"parent (ask_parent_question_kandev) for critical decisions only. Fixed at creation, not inherited. Default false.").Default(false),
		"workspace_mode": Enum("Where a subtask's agent works: inherit_parent shares the parent task's working directory "+
			"(worktree or folder; the default for a subtask without a repository of its own); new_workspace gives it its own. "+
			"inherit_parent needs parent_id.", kanban.WorkspaceInheritParent, kanban.WorkspaceNew),
	}, "title"),
	Output: out("The created (or deduplicated) task.", P{
		"task":         taskOut,
		"deduplicated": Bool("True when external_id matched an existing task and nothing was created."),
		"session_id":   Str("The agent session started on the task, if any."),
	}, "task", "deduplicated"),
	Hints: WriteHints,
	// The reference product's legacy name of prompt.
	Aliases: []Alias{{From: "description", To: "prompt"}},
}
