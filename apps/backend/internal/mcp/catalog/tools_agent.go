package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupConfigAgents = declare(&Group{Name: "config-agents", Tools: []*Tool{
	{
		Name:   "update_agent_kandev",
		Action: kanban.ActionAgentUpdate,
		Title:  "Update agent",
		Description: "Change an agent type's MCP support and MCP config file path. Agent types are global (every " +
			"workspace's sessions run them): the operator's only, a config-mode session is refused (FORBIDDEN).",
		Input: Obj("", P{
			"agent_id":        ID("Agent to change."),
			"supports_mcp":    Bool("Whether the agent can use MCP tools."),
			"mcp_config_path": Str("Path of the agent's MCP config file; empty clears it.").Len(0, kanban.MaxPathLen),
		}, "agent_id"),
		Output: agentConfigOut,
		Hints:  IdempotentWrite,
	},
	{
		Name:   "list_agent_profiles_kandev",
		Action: kanban.ActionAgentProfileList,
		Title:  "List agent profiles",
		Description: "List agent profiles (named model and approval settings of an agent), oldest first. A config-mode " +
			"session sees the global profiles and its own workspace's (workspace_id set).",
		Input: Obj("", PageProps(P{
			"agent_id": ID("Only profiles of this agent."),
		})),
		Output: listOf(agentProfileOut),
		Hints:  ReadHints,
	},
	{
		Name:   "create_agent_profile_kandev",
		Action: kanban.ActionAgentProfileCreate,
		Title:  "Create agent profile",
		Description: "Add a named profile to an agent; its first profile is its default. Created by a config-mode " +
			"session, the profile belongs to the session's workspace: only that workspace lists, changes and uses it, and " +
			"it is never a default.",
		Input: Obj("", P{
			"agent_id":      ID("Agent the profile configures."),
			"name":          Str("Name, unique per agent.").Len(1, kanban.MaxNameLen),
			"model":         Str("Model; empty uses the agent's default.").Len(0, kanban.MaxModelLen),
			"auto_approve":  Bool("Approve its permission requests automatically.").Default(false),
			"user_question": Bool("Sessions may ask the operator questions.").Default(true),
		}, "agent_id", "name"),
		Output: agentProfileOut,
		Hints:  WriteHints,
	},
	{
		Name:   "update_agent_profile_kandev",
		Action: kanban.ActionAgentProfileUpdate,
		Title:  "Update agent profile",
		Description: "Change an agent profile; only the fields you give change. A config-mode session changes only " +
			"its own workspace's profiles (global ones: FORBIDDEN, the operator's).",
		Input: Obj("", P{
			"profile_id":    ID("Agent profile to change."),
			"name":          Str("New name, unique within the agent.").Len(1, kanban.MaxNameLen),
			"model":         Str("Model; empty uses the agent's default.").Len(0, kanban.MaxModelLen),
			"auto_approve":  Bool("Approve its permission requests automatically."),
			"user_question": Bool("Sessions may ask the operator questions."),
		}, "profile_id"),
		Output: agentProfileOut,
		Hints:  IdempotentWrite,
	},
	{
		Name:   "delete_agent_profile_kandev",
		Action: kanban.ActionAgentProfileDelete,
		Title:  "Delete agent profile",
		Description: "Permanently delete an agent profile and its MCP config; refused while a running session uses it, " +
			"if it is the agent's last global one, and for a config-mode session unless it is of the session's workspace.",
		Input: Obj("", P{
			"profile_id": ID("Agent profile to delete."),
		}, "profile_id"),
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
