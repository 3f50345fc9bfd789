package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupConfigAgents = declare(&Group{Name: "config-agents", Tools: []*Tool{
	{
		Action: kanban.ActionAgentUpdate,
		Title:  "Update agent",
		Description: "Change an agent type's MCP support and MCP config file path. Agent types are global (every " +
			"workspace's sessions run them): the operator's only, a config-mode session is refused (FORBIDDEN).",
		Output: agentConfigOut,
		Hints:  IdempotentWrite,
	},
	{
		Name:   "list_agent_profiles_kandev",
		Action: kanban.ActionAgentProfileList,
		Drop:   []string{"workspace_id"},
		Title:  "List agent profiles",
		Description: "List agent profiles (named model and approval settings of an agent), oldest first. A config-mode " +
			"session sees the global profiles and its own workspace's (workspace_id set).",
		Output: listOf(agentProfileOut),
		Hints:  ReadHints,
	},
	{
		Action: kanban.ActionAgentProfileCreate,
		Title:  "Create agent profile",
		Description: "Add a named profile to an agent; its first profile is its default. Created by a config-mode " +
			"session, the profile belongs to the session's workspace: only that workspace lists, changes and uses it, and " +
			"it is never a default.",
		Output: agentProfileOut,
		Hints:  WriteHints,
	},
	{
		Action: kanban.ActionAgentProfileUpdate,
		Title:  "Update agent profile",
		Description: "Change an agent profile; only the fields you give change. A config-mode session changes only " +
			"its own workspace's profiles (global ones: FORBIDDEN, the operator's).",
		Output: agentProfileOut,
		Hints:  IdempotentWrite,
	},
	{
		Action: kanban.ActionAgentProfileDelete,
		Title:  "Delete agent profile",
		Description: "Permanently delete an agent profile and its MCP config; refused while a running session uses it, " +
			"if it is the agent's last global one, and for a config-mode session unless it is of the session's workspace.",
		Output: deletionOut,
		Hints:  DestructiveHints,
	},
}})

var (
	agentConfigOut = out("An agent type.", agentFields(P{
		"mcp_config_path": Str("Path of the agent's MCP config file; absent when unset."),
	}), "id", "name", "supports_mcp")
	agentProfileOut = out("An agent profile.", P{
		"id": Str("Profile id."), "agent_id": Str("Agent."), "name": Str("Name."),
		"model":         Str("Model; empty for the agent's default."),
		"auto_approve":  Bool("Tool permission requests are approved automatically."),
		"user_question": Bool("Sessions may ask the operator questions."),
		"is_default":    Bool("Used when no profile is named."),
		"workspace_id":  Str("The workspace the profile belongs to; absent for a global profile."),
	}, "id", "agent_id", "name")
)
