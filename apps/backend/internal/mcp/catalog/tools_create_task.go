package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupCreateTask = declare(&Group{Name: "create-task", Tools: []*Tool{createTaskTool}})

var createTaskTool = &Tool{
	Name:   "create_task_kandev",
	Action: kanban.ActionTaskCreate,
	Title:  "Create task",
	Description: "Create a task on a workflow step and, unless start_agent is false, start an agent on it with prompt as its " +
		"instructions. With external_id a retry is safe: the same key returns the existing task, deduplicated=true.",
	Input: Obj("", P{
		"title":  Str("Short title shown on the board.").Len(1, kanban.MaxTitleLen),
		"prompt": Str("Instructions for the task's agent, stored as its description.").Len(0, kanban.MaxPromptLen),
		"parent_id": TaskRef(`Parent task; "self" makes it a subtask of yours. From task mode: your task, a subtask or a ` +
			`task you created.`),
		"workspace_id":        ID("Workspace; default yours, else the first."),
		"workflow_id":         ID("Workflow; default yours, else the workspace's first."),
		"workflow_step_id":    ID("Step; default the workflow's start step."),
		"agent_profile_id":    ID("Agent profile of the task's agents, kept for later starts too; default the default one."),
		"executor_profile_id": ID("Executor profile of the task's agents, kept for later starts too; default the default one."),
		"start_agent":         Bool("Start an agent session (its id is returned).").Default(true),
		"repository_id":       ID("Repository to work in; at most one of repository_id, local_path, repository_url."),
		"local_path":          Str("Local checkout to work in (new ones: operator only).").Len(1, kanban.MaxPathLen),
		"repository_url":      Str("Remote repository URL (new ones: operator only).").Len(1, kanban.MaxURLLen),
		"base_branch":         Str("Branch to start from; default the repository's.").Len(1, kanban.MaxBranchLen),
		"external_id":         Str("Idempotency key, unique per workspace.").Len(1, kanban.MaxExternalIDLen),
		"blocked_by": Arr(`Tasks of the workspace this one depends on ("self" allowed).`,
			TaskRef("A blocking task id.")).Items(0, kanban.MaxBlockedBy).Unique(),
		"start_when_unblocked": Bool("Start the agent only once every blocker is completed. Default: true with blocked_by; false " +
			"creates the dependencies with no automatic start."),
		"autopilot": Bool("Autopilot: its agent never asks the operator; a subtask asks its parent " +
			"(ask_parent_question_kandev). Fixed at creation.").Default(false),
		"workspace_mode": Enum("Where a subtask works: inherit_parent shares the parent's directory (default without "+
			"a repository of its own); new_workspace gets its own.", kanban.WorkspaceInheritParent, kanban.WorkspaceNew),
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
