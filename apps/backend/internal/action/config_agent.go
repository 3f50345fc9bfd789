package action

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// SecretMask replaces every env and header value of an MCP server config
// on read. Writing it back keeps the stored value of that key, so a
// read-modify-write round trip never clobbers a secret.
const SecretMask = "********"

// AgentUpdateIn is the payload of agent.update.
type AgentUpdateIn struct {
	AgentID       string  `json:"agent_id,omitzero"`
	SupportsMCP   *bool   `json:"supports_mcp,omitzero"`
	MCPConfigPath *string `json:"mcp_config_path,omitzero"`
}

// AgentProfileListIn is the payload of agent.profile.list; an empty
// AgentID lists every agent's profiles. WorkspaceID (the operator's
// filter) lists only the profiles usable there: the global ones and that
// workspace's. A session always gets its own workspace's view.
type AgentProfileListIn struct {
	AgentID     string `json:"agent_id,omitzero"`
	WorkspaceID string `json:"workspace_id,omitzero"`
	Limit       int    `json:"limit,omitzero"`
	Cursor      string `json:"cursor,omitzero"`
}

// AgentProfileCreateIn is the payload of agent.profile.create.
// UserQuestion defaults to true.
type AgentProfileCreateIn struct {
	AgentID      string `json:"agent_id,omitzero"`
	Name         string `json:"name,omitzero"`
	Model        string `json:"model,omitzero"`
	AutoApprove  bool   `json:"auto_approve,omitzero"`
	UserQuestion *bool  `json:"user_question,omitzero"`
}

// AgentProfileUpdateIn is the payload of agent.profile.update: set fields change.
type AgentProfileUpdateIn struct {
	ProfileID    string  `json:"profile_id,omitzero"`
	Name         *string `json:"name,omitzero"`
	Model        *string `json:"model,omitzero"`
	AutoApprove  *bool   `json:"auto_approve,omitzero"`
	UserQuestion *bool   `json:"user_question,omitzero"`
}

// MCPConfigGetIn is the payload of mcp_config.get.
type MCPConfigGetIn struct {
	AgentProfileID string `json:"profile_id,omitzero"`
}

// MCPConfigUpdateIn is the payload of mcp_config.update. Servers nil keeps
// the stored servers; otherwise it replaces them, and an env or header
// value equal to SecretMask keeps that key's stored value.
type MCPConfigUpdateIn struct {
	AgentProfileID string                            `json:"profile_id,omitzero"`
	Enabled        *bool                             `json:"enabled,omitzero"`
	Servers        map[string]kanban.MCPServerConfig `json:"servers,omitzero"`
}

var _ = declare(Def[ListIn, *kanban.List[kanban.Agent]]{
	Name:   kanban.ActionAgentList,
	Effect: Reads,
	Tool:   "list_agents_kandev",
	Allow:  AllowOperator | AllowSession,
	Schema: schema.Obj("", pageProps(schema.P{})),
	Run: func(s *Service, ctx context.Context, _ Principal, in ListIn) (*kanban.List[kanban.Agent], error) {
		return s.store.ListAgents(ctx, in.page())
	},
})

// Agent types are global: what one runs everywhere is the operator's to
// change. The tool stays in config mode (the reference lists it there),
// refused with a reason.
var _ = declare(Def[AgentUpdateIn, *kanban.Agent]{
	Name:   kanban.ActionAgentUpdate,
	Effect: Writes,
	Tool:   "update_agent_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"agent_id":        idProp("Agent to change."),
		"supports_mcp":    schema.Bool("Whether the agent can use MCP tools."),
		"mcp_config_path": schema.Str("Path of the agent's MCP config file; empty clears it.").Len(0, kanban.MaxPathLen),
	}, "agent_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in AgentUpdateIn) (*kanban.Agent, error) {
		if !p.IsOperator() {
			return nil, kanban.Errorf(kanban.CodeForbidden, "agent types are global: only the operator changes them")
		}
		return s.store.UpdateAgent(ctx, in.AgentID, in.SupportsMCP, in.MCPConfigPath)
	},
})

var _ = declare(Def[AgentProfileListIn, *kanban.List[kanban.AgentProfile]]{
	Name:   kanban.ActionAgentProfileList,
	Effect: Reads,
	Allow:  cfg,
	Schema: schema.Obj("", pageProps(schema.P{
		"agent_id":     idProp("Only profiles of this agent."),
		"workspace_id": idProp(usableInWorkspace),
	})),
	Run: func(s *Service, ctx context.Context, p Principal, in AgentProfileListIn) (*kanban.List[kanban.AgentProfile], error) {
		ws, err := listScope(p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		return s.store.ListAgentProfiles(ctx, kanban.ProfileFilter{ParentID: in.AgentID, Workspace: ws}, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[AgentProfileCreateIn, *kanban.AgentProfile]{
	Name:   kanban.ActionAgentProfileCreate,
	Effect: Writes,
	Tool:   "create_agent_profile_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"agent_id":      idProp("Agent the profile configures."),
		"name":          schema.Str("Name, unique per agent.").Len(1, kanban.MaxNameLen),
		"model":         schema.Str("Model; empty uses the agent's default.").Len(0, kanban.MaxModelLen),
		"auto_approve":  schema.Bool("Approve its permission requests automatically.").Default(false),
		"user_question": schema.Bool("Sessions may ask the operator questions.").Default(true),
	}, "agent_id", "name"),
	Run: func(s *Service, ctx context.Context, p Principal, in AgentProfileCreateIn) (*kanban.AgentProfile, error) {
		ws, err := writerScope(p)
		if err != nil {
			return nil, err
		}
		return s.store.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: in.AgentID, Name: in.Name, Model: in.Model,
			AutoApprove: in.AutoApprove, UserQuestion: in.UserQuestion == nil || *in.UserQuestion, WorkspaceID: ws})
	},
})

var _ = declare(Def[AgentProfileUpdateIn, *kanban.AgentProfile]{
	Name:   kanban.ActionAgentProfileUpdate,
	Effect: Writes,
	Tool:   "update_agent_profile_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"profile_id":    idProp("Agent profile to change."),
		"name":          schema.Str("New name, unique within the agent.").Len(1, kanban.MaxNameLen),
		"model":         schema.Str("Model; empty uses the agent's default.").Len(0, kanban.MaxModelLen),
		"auto_approve":  schema.Bool("Approve its permission requests automatically."),
		"user_question": schema.Bool("Sessions may ask the operator questions."),
	}, "profile_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in AgentProfileUpdateIn) (*kanban.AgentProfile, error) {
		if err := s.writableAgentProfile(ctx, p, in.ProfileID); err != nil {
			return nil, err
		}
		return s.store.UpdateAgentProfile(ctx, in.ProfileID, kanban.AgentProfileUpdate{Name: in.Name, Model: in.Model,
			AutoApprove: in.AutoApprove, UserQuestion: in.UserQuestion})
	},
})

var _ = declare(Def[ProfileRefIn, *Deleted]{
	Name:   kanban.ActionAgentProfileDelete,
	Effect: Writes,
	Tool:   "delete_agent_profile_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"profile_id": idProp("Agent profile to delete."),
	}, "profile_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in ProfileRefIn) (*Deleted, error) {
		if err := s.writableAgentProfile(ctx, p, in.ProfileID); err != nil {
			return nil, err
		}
		if err := s.store.DeleteAgentProfile(ctx, in.ProfileID); err != nil {
			return nil, err
		}
		return &Deleted{ID: in.ProfileID, Deleted: true}, nil
	},
})

var _ = declare(Def[MCPConfigGetIn, *kanban.MCPConfig]{
	Name:   kanban.ActionMCPConfigGet,
	Effect: Reads,
	Tool:   "get_mcp_config_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"profile_id": idProp("Agent profile whose MCP config to read."),
	}, "profile_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in MCPConfigGetIn) (*kanban.MCPConfig, error) {
		ws, err := writerScope(p)
		if err != nil {
			return nil, err
		}
		prof, err := s.store.GetAgentProfile(ctx, in.AgentProfileID)
		if err != nil {
			return nil, err
		}
		if err := kanban.CheckProfileRead(kanban.AgentProfileKind, prof.WorkspaceID, ws); err != nil {
			return nil, err
		}
		c, err := s.store.GetMCPConfig(ctx, in.AgentProfileID)
		if err != nil {
			return nil, err
		}
		return maskMCPConfig(c), nil
	},
})

var _ = declare(Def[MCPConfigUpdateIn, *kanban.MCPConfig]{
	Name:   kanban.ActionMCPConfigUpdate,
	Effect: Writes,
	Tool:   "update_mcp_config_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"profile_id": idProp("Agent profile to change."),
		"enabled":    schema.Bool("Whether its agent gets MCP servers."),
		"servers":    mcpServers(),
	}, "profile_id"),
	Run: (*Service).updateMCPConfig,
})

// writableAgentProfile refuses (FORBIDDEN) p a change of the profile
// unless p is the operator or a session of the profile's workspace.
func (s *Service) writableAgentProfile(ctx context.Context, p Principal, id string) error {
	ws, err := writerScope(p)
	if err != nil {
		return err
	}
	prof, err := s.store.GetAgentProfile(ctx, id)
	if err != nil {
		return err
	}
	return kanban.CheckProfileWrite(kanban.AgentProfileKind, prof.WorkspaceID, ws)
}

// updateMCPConfig writes a profile's MCP configuration. In the write's
// transaction: the profile must be the caller's to change; masked values
// take the stored secrets back; and a config-mode session's servers must
// leave every stored stdio server as it is (kanban.CheckDelegateServers).
func (s *Service) updateMCPConfig(ctx context.Context, p Principal, in MCPConfigUpdateIn) (*kanban.MCPConfig, error) {
	ws, err := writerScope(p)
	if err != nil {
		return nil, err
	}
	c, err := s.store.UpdateMCPConfig(ctx, in.AgentProfileID, kanban.MCPConfigUpdate{Enabled: in.Enabled, Servers: in.Servers,
		Check: func(prof *kanban.AgentProfile, stored *kanban.MCPConfig, servers map[string]kanban.MCPServerConfig) (map[string]kanban.MCPServerConfig, error) {
			if err := kanban.CheckProfileWrite(kanban.AgentProfileKind, prof.WorkspaceID, ws); err != nil {
				return nil, err
			}
			if servers == nil {
				return nil, nil
			}
			if ws != "" {
				// Before the secrets' own rules, so that any stdio change
				// is refused alike.
				if err := kanban.CheckDelegateServers(stored.Servers, keptSecrets(servers, stored.Servers)); err != nil {
					return nil, err
				}
			}
			return unmaskServers(servers, stored.Servers)
		}})
	if err != nil {
		return nil, err
	}
	return maskMCPConfig(c), nil
}

// maskMCPConfig returns a copy of c with every env and header value masked.
func maskMCPConfig(c *kanban.MCPConfig) *kanban.MCPConfig {
	out := *c
	out.Servers = make(map[string]kanban.MCPServerConfig, len(c.Servers))
	for name, srv := range c.Servers {
		srv.Env = maskValues(srv.Env)
		srv.Headers = maskValues(srv.Headers)
		out.Servers[name] = srv
	}
	return &out
}

func maskValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = SecretMask
	}
	return out
}

// unmaskServers returns a copy of in where each masked env or header value
// is replaced by the stored value of the same server and key. A masked
// value with nothing stored to keep is refused rather than stored as is,
// and so is one on a server whose destination (type, command, args, url)
// changes: a kept secret must never be redirected to a new destination.
func unmaskServers(in, stored map[string]kanban.MCPServerConfig) (map[string]kanban.MCPServerConfig, error) {
	out := make(map[string]kanban.MCPServerConfig, len(in))
	for name, srv := range in {
		var err error
		old, known := stored[name]
		if known && (hasMask(srv.Env) || hasMask(srv.Headers)) {
			if srv.Type != old.Type || srv.Command != old.Command || srv.URL != old.URL || !slices.Equal(srv.Args, old.Args) {
				return nil, kanban.FieldError("servers", "a masked secret can only be kept while the server's type, command, args and url stay the same; send the secret again to change them")
			}
		}
		if srv.Env, err = unmaskValues("servers.*.env", srv.Env, old.Env); err != nil {
			return nil, err
		}
		if srv.Headers, err = unmaskValues("servers.*.headers", srv.Headers, old.Headers); err != nil {
			return nil, err
		}
		out[name] = srv
	}
	return out, nil
}

// keptSecrets is in with every masked value that has a stored value of
// the same server and key replaced by it (others stay masked): what the
// servers would be if their kept secrets were kept, to compare them with
// the stored ones before unmaskServers applies its rules.
func keptSecrets(in, stored map[string]kanban.MCPServerConfig) map[string]kanban.MCPServerConfig {
	out := make(map[string]kanban.MCPServerConfig, len(in))
	for name, srv := range in {
		old := stored[name]
		srv.Env, srv.Headers = keptValues(srv.Env, old.Env), keptValues(srv.Headers, old.Headers)
		out[name] = srv
	}
	return out
}

func keptValues(in, stored map[string]string) map[string]string {
	out := maps.Clone(in)
	for k, v := range in {
		if old, ok := stored[k]; ok && v == SecretMask {
			out[k] = old
		}
	}
	return out
}

func hasMask(m map[string]string) bool {
	for _, v := range m {
		if v == SecretMask {
			return true
		}
	}
	return false
}

func unmaskValues(field string, in, stored map[string]string) (map[string]string, error) {
	if in == nil {
		return nil, nil
	}
	out := maps.Clone(in)
	for k, v := range in {
		if v != SecretMask {
			continue
		}
		old, ok := stored[k]
		if !ok {
			return nil, kanban.FieldError(field, "a masked value can only keep a stored secret of the same server and key")
		}
		out[k] = old
	}
	return out, nil
}

// mcpServers is the explicit record of MCP servers by name.
func mcpServers() schema.S {
	return schema.Record("MCP servers by name; replaces the stored ones.",
		kanban.MCPServerNamePattern, mcpServer()).Props(0, kanban.MaxMCPServers)
}

// mcpServer is one server's closed config.
func mcpServer() schema.S {
	return schema.Obj("One MCP server.", schema.P{
		"type":    schema.Enum("How the agent reaches the server.", kanban.MCPServerTypes...),
		"command": schema.Str("stdio: executable (required).").Len(1, kanban.MaxCommandLen),
		"args":    schema.Arr("stdio: command-line arguments.", schema.Str("One argument.").Len(0, kanban.MaxCommandLen)).Items(0, kanban.MaxMCPServerArgs),
		"env": secretRecord("stdio: environment, read back masked; no loader or interpreter variables (LD_*, PATH, "+
			"NODE_OPTIONS, ...).", kanban.EnvNamePattern),
		"url":     schema.Str("http: its URL (required).").Len(1, kanban.MaxCommandLen),
		"headers": secretRecord("http: headers, read back masked; no control characters (CR, LF, ...).", kanban.HeaderNamePattern),
		"proxy": schema.Bool("Serve its tools as <server>__<tool> through the session's Kandev MCP server, validated " +
			"there; else the agent connects directly."),
		"timeout_seconds": schema.Int("Proxied: seconds a call may take (default 60).").Range(1, kanban.MaxUpstreamTimeout),
		"max_tool_bytes": schema.Int(fmt.Sprintf("Proxied: bytes one tool may take as advertised, else not served (default %d).",
			kanban.DefaultUpstreamToolBytes)).Range(1, kanban.MaxUpstreamToolBytes),
		"max_server_bytes": schema.Int(fmt.Sprintf("Proxied: bytes all its tools may take, admitted in name order (default %d, "+
			"≥ max_tool_bytes).", kanban.DefaultUpstreamServerBytes)).Range(1, kanban.MaxUpstreamServerBytes),
	}, "type")
}

func secretRecord(desc, keyPattern string) schema.S {
	return schema.Record(desc, keyPattern, schema.Str(`A value; "`+SecretMask+`" keeps the stored one.`).Len(0, kanban.MaxSecretValueLen)).
		Props(0, kanban.MaxMCPServerMapKeys)
}
