package catalog

import (
	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var groupConfigMCP = declare(&Group{Name: "config-mcp", Tools: []*Tool{
	{
		Name:   "get_mcp_config_kandev",
		Action: kanban.ActionMCPConfigGet,
		Title:  "Get MCP config",
		Description: "Read an agent profile's MCP configuration: whether MCP is enabled and the MCP servers its agent connects to. " +
			"env and headers values are secrets and always read back masked as \"" + action.SecretMask + "\". A config-mode " +
			"session reads global profiles and its own workspace's.",
		Input: Obj("", P{
			"profile_id": ID("Agent profile whose MCP config to read."),
		}, "profile_id"),
		Output: mcpConfigOut,
		Hints:  ReadHints,
	},
	{
		Name:   "update_mcp_config_kandev",
		Action: kanban.ActionMCPConfigUpdate,
		Title:  "Update MCP config",
		Description: "Enable or disable MCP for an agent profile and/or replace all its MCP servers; an env or header " +
			"value of \"" + action.SecretMask + "\" keeps that stored secret. env may not set variables that hijack the " +
			"loader or an interpreter (LD_*, DYLD_*, PATH, NODE_OPTIONS, PYTHONPATH, BASH_ENV, GIT_*, KANDEV_*, ...); " +
			"header names and values may not hold CR, LF or other control characters. A config-mode session changes " +
			"only its own workspace's profiles, and there only http servers and enabled: stdio servers (command, args, " +
			"env) are the operator's, to be sent back exactly as read.",
		Input: Obj("", P{
			"profile_id": ID("Agent profile to change."),
			"enabled":    Bool("Whether its agent gets MCP servers."),
			"servers":    mcpServers(),
		}, "profile_id"),
		Output: mcpConfigOut,
		Hints:  IdempotentWrite,
	},
}})

// mcpServers is the explicit record of MCP servers by name.
func mcpServers() S {
	return Record("MCP servers by name; replaces the stored ones.",
		kanban.MCPServerNamePattern, mcpServer()).Props(0, kanban.MaxMCPServers)
}

// mcpServer is one server's closed config.
func mcpServer() S {
	return Obj("One MCP server.", P{
		"type":    Enum("How the agent reaches the server.", kanban.MCPServerTypes...),
		"command": Str("stdio: executable (required).").Len(1, kanban.MaxCommandLen),
		"args":    Arr("stdio: command-line arguments.", Str("One argument.").Len(0, kanban.MaxCommandLen)).Items(0, kanban.MaxMCPServerArgs),
		"env": secretRecord("stdio: environment, read back masked; no loader or interpreter variables (LD_*, PATH, "+
			"NODE_OPTIONS, ...).", kanban.EnvNamePattern),
		"url":     Str("http: its URL (required).").Len(1, kanban.MaxCommandLen),
		"headers": secretRecord("http: headers, read back masked; no control characters (CR, LF, ...).", kanban.HeaderNamePattern),
		"proxy": Bool("Serve its tools as <server>__<tool> through the session's Kandev MCP server, validated " +
			"there; else the agent connects directly."),
		"timeout_seconds": Int("Proxied: seconds a call may take (default 60).").Range(1, kanban.MaxUpstreamTimeout),
	}, "type")
}

func secretRecord(desc, keyPattern string) S {
	return Record(desc, keyPattern, Str(`A value; "`+action.SecretMask+`" keeps the stored one.`).Len(0, kanban.MaxSecretValueLen)).
		Props(0, kanban.MaxMCPServerMapKeys)
}

var mcpConfigOut = out("An agent profile's MCP configuration; env and header values are masked.", P{
	"agent_profile_id": Str("Agent profile."),
	"enabled":          Bool("Whether the profile's agent gets MCP servers."),
	"servers": S{"type": "object", "description": "MCP servers by name.",
		"additionalProperties": out("One MCP server.", P{
			"type": Str("stdio or http."), "command": Str("stdio command."),
			"args": Arr("stdio arguments.", Str("One argument.")),
			"env": S{"type": "object", "description": "Environment variable names, values masked.",
				"additionalProperties": Str("Masked value.")},
			"url": Str("http URL."),
			"headers": S{"type": "object", "description": "Header names, values masked.",
				"additionalProperties": Str("Masked value.")},
			"proxy":           Bool("Served through the session's Kandev MCP server."),
			"timeout_seconds": Int("Proxied call timeout in seconds (absent: 60)."),
		}, "type")},
	"updated_at": Str("Last change (RFC 3339)."),
}, "agent_profile_id", "enabled", "servers")
