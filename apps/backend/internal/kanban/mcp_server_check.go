package kanban

import "net/url"

// Check applies the rules of one MCP server config that its JSON Schema
// does not state (mcp_config.update's contract holds its shape, types,
// bounds and names): a stdio server has a command and no url or headers;
// an http server has an http(s) URL and no command or args; a call
// timeout and byte budgets apply to a proxied server only, and the budgets
// are in range with the server's at least the tool's; and LaunchCheck's
// rules (environment names, header characters).
func (c MCPServerConfig) Check() error {
	switch c.Type {
	case MCPServerStdio:
		if c.Command == "" {
			return FieldError("servers.*.command", "is required for a stdio server")
		}
		if c.URL != "" || len(c.Headers) > 0 {
			return FieldError("servers.*", "a stdio server takes no url or headers")
		}
	case MCPServerHTTP:
		if c.Command != "" || len(c.Args) > 0 {
			return FieldError("servers.*", "an http server takes no command or args")
		}
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return FieldError("servers.*.url", "must be an http or https URL")
		}
	default:
		return FieldError("servers.*.type", "must be stdio or http")
	}
	if c.TimeoutSeconds != 0 && !c.Proxy {
		return FieldError("servers.*.timeout_seconds", "applies to proxied servers only (proxy: true)")
	}
	if err := c.budgetCheck(); err != nil {
		return err
	}
	return c.LaunchCheck()
}

// budgetCheck applies the rules of max_tool_bytes and max_server_bytes
// (0 is absent: the default).
func (c MCPServerConfig) budgetCheck() error {
	if (c.MaxToolBytes != 0 || c.MaxServerBytes != 0) && !c.Proxy {
		return FieldError("servers.*.max_tool_bytes", "max_tool_bytes and max_server_bytes apply to proxied servers only (proxy: true)")
	}
	if c.MaxToolBytes < 0 || c.MaxToolBytes > MaxUpstreamToolBytes {
		return FieldError("servers.*.max_tool_bytes", "must be between 1 and %d", MaxUpstreamToolBytes)
	}
	if c.MaxServerBytes < 0 || c.MaxServerBytes > MaxUpstreamServerBytes {
		return FieldError("servers.*.max_server_bytes", "must be between 1 and %d", MaxUpstreamServerBytes)
	}
	if c.ServerBytes() < c.ToolBytes() {
		return FieldError("servers.*.max_server_bytes", "must be at least max_tool_bytes (default %d)", DefaultUpstreamToolBytes)
	}
	return nil
}
