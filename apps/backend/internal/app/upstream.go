package app

import (
	"context"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream"
)

// upstreamFirstWait bounds how long `kandev mcp` waits for its proxied
// servers' first connection before serving (their tools follow with a
// list_changed if they come later).
const upstreamFirstWait = 15 * time.Second

// startUpstreams asks the backend for the session's proxied servers and,
// if there are any, connects to them: their tools are served by srv, what
// they refuse is reported to the backend. It returns nil when there are
// none.
func (m *SessionMCP) startUpstreams(ctx context.Context, srv *toolserver.Server) (*upstream.Manager, error) {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var cfg action.UpstreamConfigOut
	if err := m.client.Call(cctx, kanban.ActionUpstreamConfig, action.NoIn{}, &cfg); err != nil {
		return nil, err
	}
	if len(cfg.Servers) == 0 {
		return nil, nil
	}
	log := m.cfg.Logger
	mgr := upstream.Start(ctx, upstream.Config{
		Servers: cfg.Servers,
		Logger:  log,
		Tools: func(tools []toolserver.UpstreamTool) {
			if err := srv.SetUpstream(tools); err != nil {
				log.Error("serve upstream tools", "err", err)
			}
		},
		Report: func(ctx context.Context, servers []kanban.UpstreamServer) {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := m.client.Call(rctx, kanban.ActionUpstreamReport, reportOf(servers), nil); err != nil {
				log.Warn("report upstream servers", "code", kanban.ErrorCode(err))
			}
		},
	})
	mgr.WaitFirst(ctx, upstreamFirstWait)
	return mgr, nil
}

func reportOf(servers []kanban.UpstreamServer) action.UpstreamReportIn {
	out := action.UpstreamReportIn{Servers: make([]action.UpstreamReport, len(servers))}
	for i, s := range servers {
		r := action.UpstreamReport{Name: s.Name, Type: s.Type, State: s.State, Detail: s.Detail,
			ToolsServed: s.ToolsServed, ToolsRefused: s.ToolsRefused, Refused: make([]action.UpstreamRefusedOne, len(s.Refused))}
		for j, t := range s.Refused {
			r.Refused[j] = action.UpstreamRefusedOne{Tool: t.Tool, Limit: t.Limit, Reason: t.Reason}
		}
		out.Servers[i] = r
	}
	return out
}
