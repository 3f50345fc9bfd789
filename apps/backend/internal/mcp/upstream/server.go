package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// upstreamServer is one proxied server: its connection (nil while down),
// its compiled tools and what it refused. run owns the connection's
// lifecycle; calls read the current connection.
type upstreamServer struct {
	name string
	cfg  kanban.MCPServerConfig
	m    *Manager
	log  *slog.Logger

	relist chan struct{} // a list_changed arrived (buffer 1: coalesced)
	first  chan struct{} // closed after the first connection attempt

	mu      sync.Mutex
	conn    *conn
	state   string
	detail  string
	tools   []*tool
	refused []kanban.RefusedTool
	listed  string // fingerprint of the last tools/list
}

func newServer(m *Manager, name string, cfg kanban.MCPServerConfig) *upstreamServer {
	return &upstreamServer{name: name, cfg: cfg, m: m, log: m.log, relist: make(chan struct{}, 1),
		first: make(chan struct{}), state: kanban.UpstreamConnecting}
}

// current returns the live connection, or nil.
func (s *upstreamServer) current() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

func (s *upstreamServer) set(state, detail string, c *conn) {
	s.mu.Lock()
	s.state, s.detail, s.conn = state, detail, c
	s.mu.Unlock()
	s.m.changed()
}

// run connects, lists and serves until ctx ends, reconnecting with backoff
// whenever the connection is lost. A server whose stored entry breaks a
// launch rule (kanban.MCPServerConfig.LaunchCheck, e.g. an LD_PRELOAD
// written before the rule existed) is never started: it stays
// unavailable, the rule in its detail for the operator.
func (s *upstreamServer) run(ctx context.Context) {
	backoff := backoffMin
	firstDone := false
	markFirst := func() {
		if !firstDone {
			firstDone = true
			close(s.first)
		}
	}
	defer markFirst()
	if err := s.cfg.LaunchCheck(); err != nil {
		s.set(kanban.UpstreamUnavailable, kanban.Clip("not started: "+err.Error(), kanban.MaxUpstreamReason), nil)
		s.log.Warn("upstream server not started", "server", s.name, "cause", err.Error())
		markFirst()
		<-ctx.Done()
		return
	}
	for ctx.Err() == nil {
		up := time.Now()
		cause := s.session(ctx, markFirst)
		if ctx.Err() != nil {
			return
		}
		if time.Since(up) > stableAfter {
			backoff = backoffMin
		}
		s.set(kanban.UpstreamUnavailable, fmt.Sprintf("%s; retrying in %s", cause, backoff.Round(time.Millisecond)), nil)
		s.log.Warn("upstream server unavailable", "server", s.name, "cause", cause, "retry_in", backoff)
		markFirst()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, backoffMax)
	}
}

// session runs one connection: dial, list, then serve list changes until
// the connection is lost. It returns why it ended.
func (s *upstreamServer) session(ctx context.Context, ready func()) string {
	c, err := dial(ctx, s.cfg, s.notified)
	if err != nil {
		return err.Error()
	}
	defer c.close()
	if err := s.list(ctx, c); err != nil {
		return err.Error()
	}
	s.set(kanban.UpstreamReady, "", c)
	ready()
	for {
		select {
		case <-ctx.Done():
			return "stopped"
		case <-c.lost:
			return c.why()
		case <-s.relist:
			if err := s.list(ctx, c); err != nil {
				return err.Error()
			}
			s.m.changed()
			select { // coalesce a burst of list_changed notifications
			case <-ctx.Done():
			case <-time.After(relistGap):
			}
		}
	}
}

// list re-reads the tools and, when they changed, recompiles them.
func (s *upstreamServer) list(ctx context.Context, c *conn) error {
	listed, fp, err := listTools(ctx, c)
	if err != nil {
		return err
	}
	s.mu.Lock()
	same := fp == s.listed
	s.mu.Unlock()
	if same {
		return nil
	}
	tools, refused := buildTools(s.name, BudgetOf(s.cfg), listed)
	s.mu.Lock()
	s.tools, s.refused, s.listed = tools, refused, fp
	s.mu.Unlock()
	s.m.toolsChanged()
	return nil
}

// notified handles the server's notifications (called on its read loop:
// it must not block).
func (s *upstreamServer) notified(n mcp.JSONRPCNotification) {
	if n.Method != string(mcp.MethodNotificationToolsListChanged) {
		return
	}
	select {
	case s.relist <- struct{}{}:
	default:
	}
}

// snapshot is the server's state as reported.
func (s *upstreamServer) snapshot() (kanban.UpstreamServer, []*tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := kanban.UpstreamServer{Name: s.name, Type: s.cfg.Type, State: s.state, Detail: s.detail,
		ToolsServed: len(s.tools), ToolsRefused: len(s.refused), Refused: append([]kanban.RefusedTool(nil), s.refused...)}
	return u, s.tools
}
