package agent

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/docker"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// kandevServer is the name of the session's own MCP server in session/new.
const kandevServer = "kandev"

// mcpServers is what a session's agent is given: its own Kandev MCP
// server (kandev mcp, authenticated by the session token it reads from
// the session's token file, tokenfile.go: the token is neither on a
// command line nor in an environment, since an agent may pass its MCP
// configuration on to a process's command line; it also serves the
// profile's proxied servers' tools), then the agent profile's other servers as the
// executor's mcp_policy allows: inherit follows the
// profile's MCP config enabled flag, enabled gives them regardless,
// disabled gives none, restricted gives only stdio (local) servers. HTTP
// servers go only to agents that support them. A stored server that breaks
// a launch rule (kanban.MCPServerConfig.LaunchCheck: an environment
// variable that hijacks the loader or an interpreter, a header with a
// control character; entries written before the rule existed) is not
// given: dropped says which and why, for the operator.
func (m *Manager) mcpServers(ctx context.Context, sessionID string, prof *kanban.AgentProfile, l *launch) ([]profileServer, []string, error) {
	exe, tokenFile := m.cfg.Executable, l.tokenFile
	if l.docker != nil { // run in the container from its read-only mounts (docker.go)
		exe, tokenFile = docker.BinaryPath, docker.TokenPath
	}
	backend := m.cfg.BackendURL
	if l.bridge != nil { // on the SSH host, through its forwarded port (ssh.go)
		exe, tokenFile, backend = l.bridge.exe, l.bridge.tokenFile, l.bridge.backend
	}
	own := profileServer{name: kandevServer, server: acp.McpServer{Stdio: &acp.McpServerStdio{
		Name: kandevServer, Command: exe,
		Args: []string{"mcp", "--backend", backend, "--session", sessionID, "--token-file", tokenFile},
		Env:  []acp.EnvVariable{},
	}}}
	out := []profileServer{own}
	var dropped []string
	policy := "inherit"
	if l.executor != nil && l.executor.MCPPolicy != "" {
		policy = l.executor.MCPPolicy
	}
	if policy == "disabled" {
		return out, nil, nil
	}
	cfg, err := m.store.GetMCPConfig(ctx, prof.ID)
	if err != nil {
		return nil, nil, err
	}
	if !cfg.Enabled && policy != "enabled" {
		return out, nil, nil
	}
	names := make([]string, 0, len(cfg.Servers))
	for n := range cfg.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := cfg.Servers[n]
		if n == kandevServer || s.Proxy {
			continue // the session's own server's name; proxied servers are served through it
		}
		if err := s.LaunchCheck(); err != nil {
			dropped = append(dropped, "MCP server "+kanban.Clip(n, 100)+" was not given to the agent: "+err.Error()+
				". Fix the profile's MCP configuration.")
			continue
		}
		hs, env, err := m.withSecrets(ctx, s.Headers, s.Env)
		if err != nil {
			dropped = append(dropped, "MCP server "+kanban.Clip(n, 100)+" was not given to the agent: "+err.Error())
			continue
		}
		switch s.Type {
		case "http":
			if policy == "restricted" {
				continue
			}
			out = append(out, profileServer{name: n, http: true, server: acp.McpServer{Http: &acp.McpServerHttpInline{
				Name: n, Url: s.URL, Headers: headers(hs), Type: "http"}}})
		default:
			out = append(out, profileServer{name: n, server: acp.McpServer{Stdio: &acp.McpServerStdio{
				Name: n, Command: s.Command, Args: nonNil(s.Args), Env: envVars(env)}}})
		}
	}
	return out, dropped, nil
}

// profileServer is one MCP server of a session, before the agent's
// capabilities are known.
type profileServer struct {
	name   string
	http   bool
	server acp.McpServer
}

// forAgent keeps the servers an agent with HTTP support (or without) can use.
func forAgent(servers []profileServer, httpOK bool) (use []acp.McpServer, skipped []string) {
	for _, s := range servers {
		if s.http && !httpOK {
			skipped = append(skipped, s.name)
			continue
		}
		use = append(use, s.server)
	}
	return use, skipped
}

func headers(h map[string]string) []acp.HttpHeader {
	out := []acp.HttpHeader{}
	for _, k := range sortedKeys(h) {
		out = append(out, acp.HttpHeader{Name: k, Value: h[k]})
	}
	return out
}

func envVars(e map[string]string) []acp.EnvVariable {
	out := []acp.EnvVariable{}
	for _, k := range sortedKeys(e) {
		out = append(out, acp.EnvVariable{Name: k, Value: e[k]})
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// withSecrets returns a server's headers and environment with every
// "secret:NAME" value replaced by the named secret's value (copies: the
// stored configuration keeps the reference). An error names the header
// or variable and the secret, never a value.
func (m *Manager) withSecrets(ctx context.Context, hs, env map[string]string) (map[string]string, map[string]string, error) {
	resolve := func(kind string, in map[string]string) (map[string]string, error) {
		var out map[string]string
		for _, k := range sortedKeys(in) {
			name, ok := kanban.SecretRef(in[k])
			if !ok {
				continue
			}
			if m.cfg.Secret == nil {
				return nil, fmt.Errorf("%s %s refers to secret %s, but this backend has no secrets", kind, k, name)
			}
			v, err := m.cfg.Secret(ctx, in[k])
			if err != nil {
				return nil, fmt.Errorf("%s %s refers to secret %s, which could not be read (%s). Set it with secret.set", kind, k, name, kanban.ErrorCode(err))
			}
			if out == nil {
				out = maps.Clone(in)
			}
			out[k] = v
		}
		if out == nil {
			return in, nil
		}
		return out, nil
	}
	h, err := resolve("header", hs)
	if err != nil {
		return nil, nil, err
	}
	e, err := resolve("environment variable", env)
	if err != nil {
		return nil, nil, err
	}
	return h, e, nil
}
