package catalog

import (
	"strconv"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var groupConfigMCP = declare(&Group{Name: "config-mcp", Tools: []*Tool{
	{
		Action: kanban.ActionMCPConfigGet,
		Title:  "Get MCP config",
		Description: "Read an agent profile's MCP configuration: whether MCP is enabled and the MCP servers its agent connects to. " +
			"env and headers values are secrets and always read back masked as \"" + action.SecretMask + "\". A config-mode " +
			"session reads global profiles and its own workspace's.",
		Output: mcpConfigOut,
		Hints:  ReadHints,
	},
	{
		Action: kanban.ActionMCPConfigUpdate,
		Title:  "Update MCP config",
		Description: "Enable or disable MCP for an agent profile and/or replace all its MCP servers; an env or header " +
			"value of \"" + action.SecretMask + "\" keeps that stored secret. env may not set variables that hijack the " +
			"loader or an interpreter (LD_*, DYLD_*, PATH, NODE_OPTIONS, PYTHONPATH, BASH_ENV, GIT_*, KANDEV_*, ...); " +
			"header names and values may not hold CR, LF or other control characters. A config-mode session changes " +
			"only its own workspace's profiles, and there only http servers and enabled: stdio servers (command, args, " +
			"env) are the operator's, to be sent back exactly as read.",
		Output: mcpConfigOut,
		Hints:  IdempotentWrite,
	},
}})

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
			"proxy":            Bool("Served through the session's Kandev MCP server."),
			"timeout_seconds":  Int("Proxied call timeout in seconds (absent: 60)."),
			"max_tool_bytes":   Int("Proxied: byte budget of one advertised tool (absent: " + strconv.Itoa(kanban.DefaultUpstreamToolBytes) + ")."),
			"max_server_bytes": Int("Proxied: byte budget of all its advertised tools (absent: " + strconv.Itoa(kanban.DefaultUpstreamServerBytes) + ")."),
		}, "type")},
	"updated_at": Str("Last change (RFC 3339)."),
}, "agent_profile_id", "enabled", "servers")
