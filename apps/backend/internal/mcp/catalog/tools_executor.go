package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupConfigExecutors = declare(&Group{Name: "config-executors", Tools: []*Tool{
	{
		Name:        "list_executors_kandev",
		Action:      kanban.ActionExecutorList,
		Title:       "List executors",
		Description: "List executors (ways of running agents, e.g. a local process or a git worktree) by name.",
		Input:       Obj("", PageProps(P{})),
		Output:      listOf(executorOut),
		Hints:       ReadHints,
	},
	{
		Name:   "create_executor_profile_kandev",
		Action: kanban.ActionExecutorProfileCreate,
		Title:  "Create executor profile",
		Description: "Add a named profile to an executor (MCP policy, settings, prepare/cleanup scripts); its first " +
			"profile is its default. Created by a config-mode session, the profile belongs to the session's workspace " +
			"(only that workspace lists, changes and uses it; never a default), and it takes no prepare or cleanup " +
			"script: those run as shell commands on the server, the operator's only.",
		Input: Obj("", withExecutorFields(P{
			"executor_id": ID("Executor the profile configures."),
			"name":        Str("Name, unique per executor.").Len(1, kanban.MaxNameLen),
			"mcp_policy":  Enum("How its sessions treat MCP servers.", kanban.MCPPolicies...).Default(kanban.MCPPolicies[0]),
		}), "executor_id", "name"),
		Output: executorProfileConfigOut,
		Hints:  WriteHints,
	},
	{
		Name:   "update_executor_profile_kandev",
		Action: kanban.ActionExecutorProfileUpdate,
		Title:  "Update executor profile",
		Description: "Change an executor profile; only the fields you give change. A config-mode session changes only " +
			"its own workspace's profiles (global ones: FORBIDDEN) and never their prepare or cleanup scripts.",
		Input: Obj("", withExecutorFields(P{
			"profile_id": ID("Executor profile to change."),
			"name":       Str("New name, unique per executor.").Len(1, kanban.MaxNameLen),
			"mcp_policy": Enum("How its sessions treat MCP servers.", kanban.MCPPolicies...),
		}), "profile_id"),
		Output: executorProfileConfigOut,
		Hints:  IdempotentWrite,
	},
	{
		Name:   "delete_executor_profile_kandev",
		Action: kanban.ActionExecutorProfileDelete,
		Title:  "Delete executor profile",
		Description: "Permanently delete an executor profile; refused while a running session uses it, if it is the " +
			"executor's last global one, and for a config-mode session unless it is of the session's workspace.",
		Input: Obj("", P{
			"profile_id": ID("Executor profile to delete."),
		}, "profile_id"),
		Output: deletionOut,
		Hints:  DestructiveHints,
	},
}})

// withExecutorFields adds the settings shared by create and update.
func withExecutorFields(p P) P {
	p["config"] = openConfig("Executor settings by name, any JSON values (64 KiB in all); replaces the stored ones.").
		Props(0, kanban.MaxExecutorConfigKeys)
	p["prepare_script"] = Str("Shell script run before the agent; empty for none. Operator only.").Len(0, kanban.MaxScriptLen)
	p["cleanup_script"] = Str("Shell script run after the session; empty for none. Operator only.").Len(0, kanban.MaxScriptLen)
	return p
}

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
