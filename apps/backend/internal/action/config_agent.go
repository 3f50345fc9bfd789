package action

import (
	"context"
	"maps"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
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
// AgentID lists every agent's profiles.
type AgentProfileListIn struct {
	AgentID string `json:"agent_id,omitzero"`
	Limit   int    `json:"limit,omitzero"`
	Cursor  string `json:"cursor,omitzero"`
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

func (s *Service) registerAgentConfig(r *Registry) {
	cfg := AllowOperator | AllowConfigSession
	Register(r, kanban.ActionAgentList, AllowOperator|AllowSession, func(ctx context.Context, _ Principal, in ListIn) (*kanban.List[kanban.Agent], error) {
		return s.store.ListAgents(ctx, in.page())
	})
	Register(r, kanban.ActionAgentUpdate, cfg, func(ctx context.Context, _ Principal, in AgentUpdateIn) (*kanban.Agent, error) {
		return s.store.UpdateAgent(ctx, in.AgentID, in.SupportsMCP, in.MCPConfigPath)
	})
	Register(r, kanban.ActionAgentProfileList, cfg, func(ctx context.Context, _ Principal, in AgentProfileListIn) (*kanban.List[kanban.AgentProfile], error) {
		return s.store.ListAgentProfiles(ctx, in.AgentID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	})
	Register(r, kanban.ActionAgentProfileCreate, cfg, func(ctx context.Context, _ Principal, in AgentProfileCreateIn) (*kanban.AgentProfile, error) {
		return s.store.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: in.AgentID, Name: in.Name, Model: in.Model,
			AutoApprove: in.AutoApprove, UserQuestion: in.UserQuestion == nil || *in.UserQuestion})
	})
	Register(r, kanban.ActionAgentProfileUpdate, cfg, func(ctx context.Context, _ Principal, in AgentProfileUpdateIn) (*kanban.AgentProfile, error) {
		return s.store.UpdateAgentProfile(ctx, in.ProfileID, kanban.AgentProfileUpdate{Name: in.Name, Model: in.Model,
			AutoApprove: in.AutoApprove, UserQuestion: in.UserQuestion})
	})
	Register(r, kanban.ActionAgentProfileDelete, cfg, func(ctx context.Context, _ Principal, in ProfileRefIn) (*Deleted, error) {
		if err := s.store.DeleteAgentProfile(ctx, in.ProfileID); err != nil {
			return nil, err
		}
		return &Deleted{ID: in.ProfileID, Deleted: true}, nil
	})
	Register(r, kanban.ActionMCPConfigGet, cfg, func(ctx context.Context, _ Principal, in MCPConfigGetIn) (*kanban.MCPConfig, error) {
		c, err := s.store.GetMCPConfig(ctx, in.AgentProfileID)
		if err != nil {
			return nil, err
		}
		return maskMCPConfig(c), nil
	})
	Register(r, kanban.ActionMCPConfigUpdate, cfg, s.updateMCPConfig)
}

func (s *Service) updateMCPConfig(ctx context.Context, _ Principal, in MCPConfigUpdateIn) (*kanban.MCPConfig, error) {
	servers := in.Servers
	if servers != nil {
		cur, err := s.store.GetMCPConfig(ctx, in.AgentProfileID)
		if err != nil {
			return nil, err
		}
		if servers, err = unmaskServers(servers, cur.Servers); err != nil {
			return nil, err
		}
	}
	c, err := s.store.UpdateMCPConfig(ctx, in.AgentProfileID, in.Enabled, servers)
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
