package kanban

import "testing"

func TestProfileScopeRules(t *testing.T) {
	t.Parallel()
	const a, b = "ws-a", "ws-b"
	for _, c := range []struct {
		profile, caller  string
		read, write, use bool
	}{
		{"", "", true, true, true},  // operator, global profile
		{a, "", true, true, false},  // operator writes any; a task of "" is no task (use needs the task's workspace)
		{"", a, true, false, true},  // a session of A reads and uses global profiles, changes none
		{a, a, true, true, true},    // its own workspace's
		{b, a, false, false, false}, // another workspace's
	} {
		if got := CheckProfileRead(AgentProfileKind, c.profile, c.caller) == nil; got != c.read {
			t.Errorf("read %q by %q: got %v, want %v", c.profile, c.caller, got, c.read)
		}
		if got := CheckProfileWrite(AgentProfileKind, c.profile, c.caller) == nil; got != c.write {
			t.Errorf("write %q by %q: got %v, want %v", c.profile, c.caller, got, c.write)
		}
		if got := CheckProfileUse(AgentProfileKind, c.profile, c.caller) == nil; got != c.use {
			t.Errorf("use %q in %q: got %v, want %v", c.profile, c.caller, got, c.use)
		}
	}
	if ErrorCode(CheckProfileWrite(ExecutorProfileKind, "", a)) != CodeForbidden {
		t.Error("a session writing a global profile: want FORBIDDEN")
	}
}

func TestCheckDelegateServers(t *testing.T) {
	t.Parallel()
	gh := MCPServerConfig{Type: MCPServerStdio, Command: "gh-mcp", Args: []string{"--stdio"}, Env: map[string]string{"TOKEN": "t"}}
	docs := MCPServerConfig{Type: MCPServerHTTP, URL: "https://docs.example/mcp", Headers: map[string]string{"A": "b"}}
	stored := map[string]MCPServerConfig{"gh": gh, "docs": docs}
	with := func(name string, s MCPServerConfig, drop ...string) map[string]MCPServerConfig {
		out := map[string]MCPServerConfig{"gh": gh, "docs": docs, name: s}
		for _, d := range drop {
			delete(out, d)
		}
		return out
	}
	changed := func(f func(*MCPServerConfig)) MCPServerConfig {
		s := gh
		s.Args, s.Env = append([]string(nil), gh.Args...), map[string]string{"TOKEN": "t"}
		f(&s)
		return s
	}
	allowed := []map[string]MCPServerConfig{
		stored,
		with("new", MCPServerConfig{Type: MCPServerHTTP, URL: "https://new.example/mcp"}),
		with("docs", MCPServerConfig{Type: MCPServerHTTP, URL: "https://moved.example/mcp", Proxy: true}),
		with("x", docs, "docs"),
		with("gh", MCPServerConfig{Type: MCPServerStdio, Command: "gh-mcp", Args: []string{"--stdio"}, Env: map[string]string{"TOKEN": "t"}}),
	}
	for i, next := range allowed {
		if err := CheckDelegateServers(stored, next); err != nil {
			t.Errorf("allowed %d: %v", i, err)
		}
	}
	refused := map[string]map[string]MCPServerConfig{
		"new stdio":       with("sh", MCPServerConfig{Type: MCPServerStdio, Command: "/bin/sh", Args: []string{"-c", "id"}}),
		"http to stdio":   with("docs", MCPServerConfig{Type: MCPServerStdio, Command: "/bin/sh"}),
		"stdio removed":   with("docs", docs, "gh"),
		"stdio to http":   with("gh", MCPServerConfig{Type: MCPServerHTTP, URL: "https://x.example"}),
		"command":         with("gh", changed(func(s *MCPServerConfig) { s.Command = "/tmp/evil" })),
		"args":            with("gh", changed(func(s *MCPServerConfig) { s.Args = append(s.Args, "--exec") })),
		"env added":       with("gh", changed(func(s *MCPServerConfig) { s.Env["LD_PRELOAD"] = "/tmp/x.so" })),
		"env value":       with("gh", changed(func(s *MCPServerConfig) { s.Env["TOKEN"] = "other" })),
		"proxy":           with("gh", changed(func(s *MCPServerConfig) { s.Proxy = true })),
		"timeout":         with("gh", changed(func(s *MCPServerConfig) { s.TimeoutSeconds = 5 })),
		"everything gone": {},
	}
	for name, next := range refused {
		if err := CheckDelegateServers(stored, next); ErrorCode(err) != CodeForbidden {
			t.Errorf("%s: got %v, want FORBIDDEN", name, err)
		}
	}
}
