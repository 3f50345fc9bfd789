package action

import (
	"context"
	"maps"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// UpstreamConfigOut is the result of upstream.config: the proxied servers
// of the session's agent profile with their secrets (env and header values
// unmasked), empty when the profile's MCP config is disabled.
type UpstreamConfigOut struct {
	Servers map[string]kanban.MCPServerConfig `json:"servers"`
}

// UpstreamReportIn is the payload of upstream.report: the state of every
// proxied server of the session, replacing the previous report.
type UpstreamReportIn struct {
	Servers []UpstreamReport `json:"servers,omitzero"`
}

// UpstreamReport is one server of an upstream.report.
type UpstreamReport struct {
	Name         string               `json:"name"`
	Type         string               `json:"type"`
	State        string               `json:"state"`
	Detail       string               `json:"detail"`
	ToolsServed  int                  `json:"tools_served"`
	ToolsRefused int                  `json:"tools_refused"`
	Refused      []UpstreamRefusedOne `json:"refused"`
}

// UpstreamRefusedOne is one refused tool of an UpstreamReport.
type UpstreamRefusedOne struct {
	Tool   string `json:"tool"`
	Limit  string `json:"limit"`
	Reason string `json:"reason"`
}

// UpstreamListIn is the payload of upstream.list.
type UpstreamListIn struct {
	SessionID string `json:"session_id,omitzero"`
	Limit     int    `json:"limit,omitzero"`
	Cursor    string `json:"cursor,omitzero"`
}

// UpstreamRefusedIn is the payload of upstream.refused; Server "" lists
// every server's refused tools.
type UpstreamRefusedIn struct {
	SessionID string `json:"session_id,omitzero"`
	Server    string `json:"server,omitzero"`
	Limit     int    `json:"limit,omitzero"`
	Cursor    string `json:"cursor,omitzero"`
}

var _ = declare(Def[NoIn, *UpstreamConfigOut]{
	Name:   kanban.ActionUpstreamConfig,
	Effect: Reads,
	Allow:  AllowSession,
	Schema: schema.NoParams(),
	Run:    (*Service).upstreamConfig,
})

var _ = declare(Def[UpstreamReportIn, *kanban.SessionUpstreams]{
	Name:   kanban.ActionUpstreamReport,
	Effect: Writes,
	Allow:  AllowSession,
	Schema: upstreamReport(),
	Run:    (*Service).upstreamReport,
})

var _ = declare(Def[UpstreamListIn, *kanban.List[kanban.UpstreamServer]]{
	Name:   kanban.ActionUpstreamList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{"session_id": idProp("The session.")}), "session_id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in UpstreamListIn) (*kanban.List[kanban.UpstreamServer], error) {
		return s.store.ListUpstreams(ctx, in.SessionID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[UpstreamRefusedIn, *kanban.List[kanban.RefusedTool]]{
	Name:   kanban.ActionUpstreamRefused,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{
		"session_id": idProp("The session."),
		"server":     schema.Str("Only this server's refused tools.").Len(1, kanban.MaxMCPServerNameLen),
	}), "session_id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in UpstreamRefusedIn) (*kanban.List[kanban.RefusedTool], error) {
		return s.store.ListRefusedTools(ctx, in.SessionID, in.Server, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

// upstreamConfig gives a session the proxied servers of its own agent
// profile (identity from the principal, never the payload).
func (s *Service) upstreamConfig(ctx context.Context, p Principal, _ NoIn) (*UpstreamConfigOut, error) {
	out := &UpstreamConfigOut{Servers: map[string]kanban.MCPServerConfig{}}
	sess, err := s.store.GetSession(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if sess.AgentProfileID == "" {
		return out, nil
	}
	c, err := s.store.GetMCPConfig(ctx, sess.AgentProfileID)
	if err != nil {
		if kanban.ErrorCode(err) == kanban.CodeNotFound {
			return out, nil // the profile was deleted after the session started
		}
		return nil, err
	}
	if !c.Enabled {
		return out, nil
	}
	for name, srv := range c.Servers {
		if srv.Proxy {
			srv.Env, srv.Headers = maps.Clone(srv.Env), maps.Clone(srv.Headers)
			out.Servers[name] = srv
		}
	}
	return out, nil
}

// upstreamReport stores the session's report and notifies operators.
func (s *Service) upstreamReport(ctx context.Context, p Principal, in UpstreamReportIn) (*kanban.SessionUpstreams, error) {
	servers := make([]kanban.UpstreamServer, len(in.Servers))
	for i, u := range in.Servers {
		refused := make([]kanban.RefusedTool, len(u.Refused))
		for j, r := range u.Refused {
			refused[j] = kanban.RefusedTool{Server: u.Name, Tool: r.Tool, Limit: r.Limit, Reason: r.Reason}
		}
		servers[i] = kanban.UpstreamServer{Name: u.Name, Type: u.Type, State: u.State, Detail: u.Detail,
			ToolsServed: u.ToolsServed, ToolsRefused: u.ToolsRefused, Refused: refused}
	}
	stored, err := s.store.ReplaceUpstreams(ctx, p.SessionID, servers)
	if err != nil {
		return nil, err
	}
	out := &kanban.SessionUpstreams{SessionID: p.SessionID, Servers: stored}
	kanban.EventSessionUpstreamsChanged.PublishContext(ctx, s.pub, SessionTopic(p.SessionID), out)
	kanban.EventSessionUpstreamsChanged.PublishContext(ctx, s.pub, WorkspaceTopic(p.WorkspaceID), out)
	return out, nil
}

// upstreamReport is the payload a session's MCP server sends after
// (re)building its proxied tools: per server, what it serves and refused.
// The contract is its shape; the values' rules (distinct printable names,
// byte bounds, counts covering the list) are kanban.ValidateUpstreams'.
func upstreamReport() schema.S {
	refused := schema.Obj("A refused tool.", schema.P{
		"tool": schema.Str("Its name."), "limit": schema.Str("The limit it broke."), "reason": schema.Str("Why, in words."),
	}, "tool", "limit", "reason")
	server := schema.Obj("One server.", schema.P{
		"name": schema.Str("Server name."), "type": schema.Str("Transport."), "state": schema.Str("Where it stands."),
		"detail":        schema.Str("What went wrong, if anything."),
		"tools_served":  schema.Int("Tools served."),
		"tools_refused": schema.Int("Tools refused."),
		"refused":       schema.Arr("The refused tools (a bounded sample).", refused),
	}, "name", "type", "state", "tools_served", "tools_refused")
	return schema.Obj("", schema.P{"servers": schema.Arr("Every proxied server.", server)}, "servers")
}
