package store

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ReplaceUpstreams stores a session's report of its proxied servers,
// replacing its previous report, in one transaction. NOT_FOUND for a
// missing session, VALIDATION_ERROR for an invalid report.
func (s *Store) ReplaceUpstreams(ctx context.Context, sessionID string, servers []kanban.UpstreamServer) ([]kanban.UpstreamServer, error) {
	if err := kanban.ValidateUpstreams(servers); err != nil {
		return nil, err
	}
	now := kanban.Now()
	out := make([]kanban.UpstreamServer, len(servers))
	err := s.tx(ctx, func(tx txn) error {
		if _, err := getSession(ctx, tx, sessionID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM session_upstreams WHERE session_id = ?`, sessionID); err != nil {
			return fmt.Errorf("replace upstreams: %w", err)
		}
		for i, u := range servers {
			if _, err := tx.ExecContext(ctx, `INSERT INTO session_upstreams (session_id, name, type, state, detail,
				tools_served, tools_refused, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				sessionID, u.Name, u.Type, u.State, u.Detail, u.ToolsServed, u.ToolsRefused, fmtTime(now)); err != nil {
				return fmt.Errorf("replace upstreams: %w", err)
			}
			for pos, r := range u.Refused {
				if _, err := tx.ExecContext(ctx, `INSERT INTO session_upstream_refusals (session_id, server, position,
					tool, rule, reason) VALUES (?, ?, ?, ?, ?, ?)`, sessionID, u.Name, pos, r.Tool, r.Limit, r.Reason); err != nil {
					return fmt.Errorf("replace upstreams: %w", err)
				}
			}
			u.SessionID, u.UpdatedAt, u.Refused = sessionID, now, nil
			out[i] = u
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListUpstreams lists a session's proxied servers by name (NOT_FOUND for a
// missing session).
func (s *Store) ListUpstreams(ctx context.Context, sessionID string, p kanban.Page) (*kanban.List[kanban.UpstreamServer], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if _, err := getSession(ctx, s.stmts, sessionID); err != nil {
		return nil, err
	}
	return upstreamListing.page(ctx, s.stmts, p, `session_id = ?`, sessionID)
}

// ListRefusedTools lists the tools a session's MCP server refused to serve,
// by server and position; server "" lists every server's.
func (s *Store) ListRefusedTools(ctx context.Context, sessionID, server string, p kanban.Page) (*kanban.List[kanban.RefusedTool], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if _, err := getSession(ctx, s.stmts, sessionID); err != nil {
		return nil, err
	}
	if server == "" {
		return refusedListing.page(ctx, s.stmts, p, `session_id = ?`, sessionID)
	}
	return refusedListing.page(ctx, s.stmts, p, `session_id = ? AND server = ?`, sessionID, server)
}

var upstreamListing = listing[kanban.UpstreamServer]{what: "list upstreams",
	selectFrom: `SELECT session_id, name, type, state, detail, tools_served, tools_refused, updated_at FROM session_upstreams`,
	scan: func(r rowSource) (*kanban.UpstreamServer, error) {
		var u kanban.UpstreamServer
		var updated string
		if err := r.Scan(&u.SessionID, &u.Name, &u.Type, &u.State, &u.Detail, &u.ToolsServed, &u.ToolsRefused, &updated); err != nil {
			return nil, err
		}
		u.UpdatedAt = parseTime(updated)
		return &u, nil
	},
	cols: []string{"name"},
	key:  func(x kanban.UpstreamServer) []any { return []any{x.Name} },
	bound: func(kanban.UpstreamServer) int {
		return 1024 + kanban.MaxUpstreamReason*6
	}}

var refusedListing = listing[kanban.RefusedTool]{what: "list refused tools",
	selectFrom: `SELECT server, tool, rule, reason, position FROM session_upstream_refusals`,
	scan: func(r rowSource) (*kanban.RefusedTool, error) {
		var t kanban.RefusedTool
		var pos int64
		if err := r.Scan(&t.Server, &t.Tool, &t.Limit, &t.Reason, &pos); err != nil {
			return nil, err
		}
		t.Position = pos
		return &t, nil
	},
	cols: []string{"server", "position"},
	key:  func(x kanban.RefusedTool) []any { return []any{x.Server, x.Position} },
	bound: func(kanban.RefusedTool) int {
		return 512 + (kanban.MaxUpstreamToolText+kanban.MaxUpstreamReason)*6
	}}
