package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Bounds of what a bundle's configuration describes.
const (
	maxDiagProfiles   = 200  // agent profiles described (with their MCP servers)
	maxSecretProfiles = 5000 // agent profiles whose MCP secrets are redacted
	maxDiagDirEntries = 1000 // data dir entries listed, and counted per folder
)

func indent(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }

// orDefault shows a configured duration; zero means the built-in default.
func orDefault(d time.Duration) string {
	if d <= 0 {
		return "default"
	}
	return d.String()
}

// configEntry describes this backend's configuration as it may be shown:
// settings, the data dir's layout, the agent runtime (commands with their
// arguments, environment names) and the agent types with their profiles'
// MCP servers (header and environment names, never values): the profiles
// usable in the bundle's workspace, the global ones and its own.
func (b *backend) configEntry(ctx context.Context, cfg Config, workspaceID string) ([]byte, error) {
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	loginFrom := "the data dir's token file"
	if cfg.Token != "" {
		loginFrom = "the KANDEV_TOKEN environment variable"
	}
	out := map[string]any{
		"addr": cfg.Addr, "data_dir": dataDir, "data_dir_layout": dirLayout(dataDir),
		"operator_login_from": loginFrom, "question_timeout": orDefault(cfg.QuestionWait),
		"archive_sweep": orDefault(cfg.ArchiveSweep), "conformance": cfg.Conformance, "registry_dir": cfg.Registry,
	}
	agents := map[string]any{"launch": cfg.Agents.Launch}
	if b.agents != nil {
		r := b.agents.Report()
		cmds := map[string]any{}
		for name, c := range r.Commands {
			cmds[name] = map[string]any{"command": c.Path, "args": safeArgs(c.Args)}
		}
		agents = map[string]any{"launch": true, "running": r.Running, "queued": r.Queued, "max_agents": r.MaxAgents,
			"agents_file": cfg.Agents.File, "stop_grace": orDefault(cfg.Agents.StopGrace), "commands": cmds,
			"env_allow": r.EnvAllow, "env_inherited_names": r.EnvInherited}
	}
	out["agent_runtime"] = agents
	types, err := b.agentTypes(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	out["agent_types"] = types
	return indent(out)
}

// safeArgs is args with the value after a secret-named flag replaced.
func safeArgs(args []string) []string { return agent.SafeArgs(args) }

// dirEntry is one entry of the data dir's top level.
type dirEntry struct {
	Name    string `json:"name"`
	Dir     bool   `json:"dir,omitempty"`
	Bytes   int64  `json:"bytes,omitempty"`
	Entries int    `json:"entries,omitempty"` // of a folder, counted up to maxDiagDirEntries
}

// dirLayout lists the top level of dir: files with their sizes, folders
// with how many entries they hold.
func dirLayout(dir string) []dirEntry {
	list, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make([]dirEntry, 0, min(len(list), maxDiagDirEntries))
	for _, e := range list[:min(len(list), maxDiagDirEntries)] {
		d := dirEntry{Name: e.Name(), Dir: e.IsDir()}
		if info, err := e.Info(); err == nil && !e.IsDir() {
			d.Bytes = info.Size()
		}
		if e.IsDir() {
			if f, err := os.Open(filepath.Join(dir, e.Name())); err == nil {
				names, err := f.Readdirnames(maxDiagDirEntries)
				if err == nil || errors.Is(err, io.EOF) {
					d.Entries = len(names)
				}
				_ = f.Close()
			}
		}
		out = append(out, d)
	}
	return out
}

// mcpProfile is an agent profile with its agent and MCP configuration.
type mcpProfile struct {
	agent *kanban.Agent
	prof  kanban.AgentProfile
	cfg   *kanban.MCPConfig
}

// mcpProfiles returns the agent profiles usable in workspaceID ("": every
// profile; at most limit, more says whether there were others) with their
// MCP configurations.
func (b *backend) mcpProfiles(ctx context.Context, workspaceID string, limit int) (out []mcpProfile, more bool, err error) {
	agents, err := b.store.ListAgents(ctx, kanban.Page{Limit: 200})
	if err != nil {
		return nil, false, err
	}
	for i := range agents.Items {
		a := &agents.Items[i]
		profs, err := b.store.ListAgentProfiles(ctx, kanban.ProfileFilter{ParentID: a.ID, Workspace: workspaceID}, kanban.Page{Limit: 200})
		if err != nil {
			return nil, false, err
		}
		more = more || profs.NextCursor != ""
		for _, p := range profs.Items {
			if len(out) == limit {
				return out, true, nil
			}
			c, err := b.store.GetMCPConfig(ctx, p.ID)
			if err != nil {
				return nil, false, err
			}
			out = append(out, mcpProfile{agent: a, prof: p, cfg: c})
		}
	}
	return out, more || agents.NextCursor != "", nil
}

// agentType is one agent type with its profiles, for a bundle.
type agentType struct {
	Name        string           `json:"name"`
	DisplayName string           `json:"display_name"`
	SupportsMCP bool             `json:"supports_mcp"`
	Profiles    []map[string]any `json:"profiles"`
}

// agentTypes describes the agent types, their profiles usable in
// workspaceID and their MCP servers.
func (b *backend) agentTypes(ctx context.Context, workspaceID string) (map[string]any, error) {
	profiles, more, err := b.mcpProfiles(ctx, workspaceID, maxDiagProfiles)
	if err != nil {
		return nil, err
	}
	var types []*agentType
	for _, p := range profiles {
		if len(types) == 0 || types[len(types)-1].Name != p.agent.Name {
			types = append(types, &agentType{Name: p.agent.Name, DisplayName: p.agent.DisplayName, SupportsMCP: p.agent.SupportsMCP})
		}
		t := types[len(types)-1]
		t.Profiles = append(t.Profiles, map[string]any{"name": p.prof.Name, "model": p.prof.Model, "default": p.prof.IsDefault,
			"auto_approve": p.prof.AutoApprove, "mcp_enabled": p.cfg.Enabled, "mcp_servers": mcpServers(p.cfg.Servers)})
	}
	return map[string]any{"types": types, "more_profiles_not_listed": more}, nil
}

// mcpServers describes MCP servers by name: how they run, and the names
// (never the values) of their headers and environment.
func mcpServers(servers map[string]kanban.MCPServerConfig) []map[string]any {
	out := make([]map[string]any, 0, len(servers))
	for _, n := range slices.Sorted(maps.Keys(servers)) {
		s := servers[n]
		out = append(out, map[string]any{"name": n, "type": s.Type, "command": s.Command, "args": safeArgs(s.Args),
			"url": action.SafeURL(s.URL), "header_names": slices.Sorted(maps.Keys(s.Headers)),
			"env_names": slices.Sorted(maps.Keys(s.Env)), "proxy": s.Proxy, "timeout_seconds": s.CallTimeout()})
	}
	return out
}
