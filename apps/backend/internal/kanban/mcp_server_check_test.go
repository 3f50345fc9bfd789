package kanban

import "testing"

func TestMCPServerConfigCheck(t *testing.T) {
	for _, ok := range []MCPServerConfig{
		{Type: MCPServerStdio, Command: "npx", Args: []string{"srv"}},
		{Type: MCPServerHTTP, URL: "https://mcp.example.com/mcp", Proxy: true, TimeoutSeconds: 30},
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
