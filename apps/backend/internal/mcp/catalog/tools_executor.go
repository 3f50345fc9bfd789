package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupConfigExecutors = declare(&Group{Name: "config-executors", Tools: []*Tool{
	{
		Action:      kanban.ActionExecutorList,
		Title:       "List executors",
		Description: "List executors (ways of running agents, e.g. a local process or a git worktree) by name.",
		Output:      listOf(executorOut),
		Hints:       ReadHints,
	},
	{
		Action: kanban.ActionExecutorProfileCreate,
		Title:  "Create executor profile",
		Description: "Add a named profile to an executor (MCP policy, settings, prepare/cleanup scripts); its first " +
			"profile is its default. Created by a config-mode session, the profile belongs to the session's workspace " +
			"(only that workspace lists, changes and uses it; never a default), and it takes no prepare or cleanup " +
			"script: those run as shell commands on the server, the operator's only. Docker executor profiles are " +
			"the operator's only.",
		Output: executorProfileConfigOut,
		Hints:  WriteHints,
	},
	{
		Action: kanban.ActionExecutorProfileUpdate,
		Title:  "Update executor profile",
		Description: "Change an executor profile; only the fields you give change. A config-mode session changes only " +
			"its own workspace's profiles (global ones: FORBIDDEN) and never their prepare or cleanup scripts.",
		Output: executorProfileConfigOut,
		Hints:  IdempotentWrite,
	},
	{
		Action: kanban.ActionExecutorProfileDelete,
		Title:  "Delete executor profile",
		Description: "Permanently delete an executor profile; refused while a running session uses it, if it is the " +
			"executor's last global one, and for a config-mode session unless it is of the session's workspace.",
		Output: deletionOut,
		Hints:  DestructiveHints,
	},
}})

var (
	executorOut = out("An executor.", P{
		"id": Str("Executor id."), "name": Str("Name."), "type": Str("Executor type."),
		"description": Str("What it does."),
	}, "id", "name")
	executorProfileConfigOut = out("An executor profile.", executorProfileFields(P{
		"config": S{"type": "object", "description": "Executor settings by name.",
			"additionalProperties": S{"description": "A setting's value."}},
		"prepare_script": Str("Script run before the agent starts; absent when none, and to sessions (not shown to agents)."),
		"cleanup_script": Str("Script run after the session ends; absent when none, and to sessions."),
	}), "id", "executor_id", "name", "mcp_policy")
)
