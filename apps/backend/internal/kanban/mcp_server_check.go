package kanban

import "net/url"

// Check applies the rules of one MCP server config that its JSON Schema
// does not state (mcp_config.update's contract holds its shape, types,
// bounds and names): a stdio server has a command and no url or headers;
// an http server has an http(s) URL and no command or args; a call
// timeout applies to a proxied server only; and LaunchCheck's rules
// (environment names, header characters).
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
	return c.LaunchCheck()
}
