package kanban

import "testing"

func TestMCPServerConfigCheck(t *testing.T) {
	for _, ok := range []MCPServerConfig{
		{Type: MCPServerStdio, Command: "npx", Args: []string{"srv"}},
		{Type: MCPServerHTTP, URL: "https://mcp.example.com/mcp", Proxy: true, TimeoutSeconds: 30},
		{Type: MCPServerHTTP, URL: "https://x", Proxy: true, MaxToolBytes: 1, MaxServerBytes: 1},
		{Type: MCPServerHTTP, URL: "https://x", Proxy: true, MaxToolBytes: MaxUpstreamToolBytes, MaxServerBytes: MaxUpstreamServerBytes},
		{Type: MCPServerHTTP, URL: "https://x", Proxy: true, MaxToolBytes: DefaultUpstreamServerBytes}, // server default = tool
		{Type: MCPServerHTTP, URL: "https://x", Proxy: true, MaxServerBytes: DefaultUpstreamToolBytes}, // tool default = server
	} {
		if err := ok.Check(); err != nil {
			t.Errorf("%+v: got %v, want nil", ok, err)
		}
	}
	for want, bad := range map[string]MCPServerConfig{
		"servers.*.command":         {Type: MCPServerStdio},
		"servers.*":                 {Type: MCPServerHTTP, URL: "http://x", Args: []string{"a"}},
		"servers.*.url":             {Type: MCPServerHTTP, URL: "ftp://x"},
		"servers.*.type":            {Type: "sse", URL: "http://x"},
		"servers.*.timeout_seconds": {Type: MCPServerStdio, Command: "x", TimeoutSeconds: 5},
	} {
		if e, ok := AsError(bad.Check()); !ok || e.Field != want {
			t.Errorf("%+v: got %v, want a VALIDATION_ERROR on %s", bad, e, want)
		}
	}
}

// TestMCPServerBudgetCheck: the byte budgets apply to proxied servers
// only, within 1..max, the server's at least the tool's (defaults count).
func TestMCPServerBudgetCheck(t *testing.T) {
	proxied := func(tool, server int) MCPServerConfig {
		return MCPServerConfig{Type: MCPServerHTTP, URL: "https://x", Proxy: true, MaxToolBytes: tool, MaxServerBytes: server}
	}
	for _, c := range []struct {
		name  string
		cfg   MCPServerConfig
		field string
	}{
		{"tool budget, not proxied", MCPServerConfig{Type: MCPServerHTTP, URL: "https://x", MaxToolBytes: 100}, "servers.*.max_tool_bytes"},
		{"server budget, not proxied", MCPServerConfig{Type: MCPServerStdio, Command: "x", MaxServerBytes: 100}, "servers.*.max_tool_bytes"},
		{"negative tool budget", proxied(-1, 0), "servers.*.max_tool_bytes"},
		{"tool budget one over", proxied(MaxUpstreamToolBytes+1, MaxUpstreamServerBytes), "servers.*.max_tool_bytes"},
		{"negative server budget", proxied(0, -5), "servers.*.max_server_bytes"},
		{"server budget one over", proxied(0, MaxUpstreamServerBytes+1), "servers.*.max_server_bytes"},
		{"server below tool", proxied(9000, 8999), "servers.*.max_server_bytes"},
		{"server below the default tool", proxied(0, DefaultUpstreamToolBytes-1), "servers.*.max_server_bytes"},
		{"tool above the default server", proxied(DefaultUpstreamServerBytes+1, 0), "servers.*.max_server_bytes"},
	} {
		e, ok := AsError(c.cfg.Check())
		if !ok || e.Code != CodeValidation || e.Field != c.field {
			t.Errorf("%s: got %v, want a VALIDATION_ERROR on %s", c.name, e, c.field)
		}
	}
	if got := (MCPServerConfig{}); got.ToolBytes() != DefaultUpstreamToolBytes || got.ServerBytes() != DefaultUpstreamServerBytes {
		t.Errorf("defaults: got %d / %d, want %d / %d", got.ToolBytes(), got.ServerBytes(), DefaultUpstreamToolBytes, DefaultUpstreamServerBytes)
	}
}
