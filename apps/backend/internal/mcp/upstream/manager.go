package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/escape"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

// Config configures a Manager.
type Config struct {
	// Servers are the proxied servers by name.
	Servers map[string]kanban.MCPServerConfig
	Logger  *slog.Logger
	// Tools receives the whole upstream tool set whenever it changes.
	Tools func([]toolserver.UpstreamTool)
	// Report receives every server's state whenever it changes; calls come
	// from one goroutine, coalesced (the latest state wins), with the
	// manager's context (Start's, cancelled by Close).
	Report func(ctx context.Context, servers []kanban.UpstreamServer)
}

// Manager runs a session's proxied servers.
type Manager struct {
	cfg     Config
	log     *slog.Logger
	servers []*upstreamServer // by name
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	report  chan struct{}

	mu         sync.Mutex
	collisions map[string][]kanban.RefusedTool // by server: names two servers would serve
	served     string                          // fingerprint of the last tool set built for Tools
	// The tool sets handed to Tools, which runs outside mu (it does I/O:
	// the session's MCP server tells its clients): each set built gets
	// the next generation; one caller at a time hands over the newest,
	// and every caller returns once a set at least as new as its own was
	// handed over, so Tools sees the sets in order, the last one last.
	built      uint64                    // generation of the newest set built
	next       []toolserver.UpstreamTool // that set
	handedOver uint64                    // generation of the newest set handed over
	handing    bool                      // a caller is in Tools
	handed     chan struct{}             // closed (and replaced) after each hand-over
}

// Start connects to every server in the background, until ctx ends or
// Close is called.
func Start(ctx context.Context, cfg Config) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	m := &Manager{cfg: cfg, log: cfg.Logger, cancel: cancel, report: make(chan struct{}, 1), collisions: map[string][]kanban.RefusedTool{},
		handed: make(chan struct{})}
	names := make([]string, 0, len(cfg.Servers))
	for n := range cfg.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m.servers = append(m.servers, newServer(m, n, cfg.Servers[n]))
	}
	m.wg.Add(1)
	go m.reporter(ctx)
	for _, s := range m.servers {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			s.run(ctx)
		}()
	}
	m.changed()
	return m
}

// WaitFirst waits, at most d, until every server has made its first
// connection attempt (connected and listed, or failed).
func (m *Manager) WaitFirst(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for _, s := range m.servers {
		select {
		case <-s.first:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Close disconnects every server (stopping stdio processes) and waits for
// the background work to end.
func (m *Manager) Close() {
	m.cancel()
	m.wg.Wait()
}

// Servers returns every server's current state.
func (m *Manager) Servers() []kanban.UpstreamServer {
	m.mu.Lock()
	coll := m.collisions
	m.mu.Unlock()
	out := make([]kanban.UpstreamServer, 0, len(m.servers))
	for _, s := range m.servers {
		u, _ := s.snapshot()
		if c := coll[s.name]; len(c) > 0 {
			u.Refused = append(u.Refused, c...)
			u.ToolsRefused += len(c)
			u.ToolsServed -= len(c)
		}
		u.ToolsRefused = max(u.ToolsRefused, len(u.Refused))
		// Keep a report well within a WebSocket message: at most
		// maxReported refusals in all (ToolsRefused still counts every one).
		if keep := max(10, maxReported/max(len(m.servers), 1)); len(u.Refused) > min(keep, kanban.MaxUpstreamRefused) {
			u.Refused = u.Refused[:min(keep, kanban.MaxUpstreamRefused)]
		}
		out = append(out, u)
	}
	return out
}

// maxReported bounds the refused tools listed in one report.
const maxReported = 400

// Refresh sends the current state to Report again (after the backend
// connection was re-established, say).
func (m *Manager) Refresh() { m.changed() }

// changed schedules a report.
func (m *Manager) changed() {
	select {
	case m.report <- struct{}{}:
	default:
	}
}

func (m *Manager) reporter(ctx context.Context) {
	defer m.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.report:
			if m.cfg.Report != nil {
				m.cfg.Report(ctx, m.Servers())
			}
		}
	}
}

// toolsChanged rebuilds the whole upstream tool set: every server's tools,
// minus names two servers would both serve (refused for both), and hands
// it to Tools when it differs from the last one. It returns once Tools
// has the set (or a newer one).
func (m *Manager) toolsChanged() {
	m.mu.Lock()
	gen := m.rebuildLocked()
	m.mu.Unlock()
	m.handOver(gen)
	m.changed()
}

// rebuildLocked builds the tool set and returns its generation (that of
// the last set built when it did not change).
func (m *Manager) rebuildLocked() uint64 {
	type owned struct {
		s *upstreamServer
		t *tool
	}
	byName := map[string][]owned{}
	var order []string
	for _, s := range m.servers {
		_, tools := s.snapshot()
		for _, t := range tools {
			if byName[t.wire.Name] == nil {
				order = append(order, t.wire.Name)
			}
			byName[t.wire.Name] = append(byName[t.wire.Name], owned{s, t})
		}
	}
	slices.Sort(order)
	coll := map[string][]kanban.RefusedTool{}
	var out []toolserver.UpstreamTool
	h := sha256.New()
	for _, name := range order {
		owners := byName[name]
		if len(owners) > 1 {
			for _, o := range owners {
				coll[o.s.name] = append(coll[o.s.name], kanban.RefusedTool{Server: o.s.name, Tool: escape.Excerpt(o.t.upstream, maxToolExcerpt),
					Limit: "name_collision", Reason: "another proxied server would serve a tool under the same name"})
			}
			continue
		}
		o := owners[0]
		srv, t := o.s, o.t
		out = append(out, toolserver.UpstreamTool{Wire: t.wire, Validator: t.validator,
			Call: func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, string) {
				return srv.call(ctx, t, args)
			}})
		h.Write(t.entry)
	}
	m.collisions = coll
	fp := hex.EncodeToString(h.Sum(nil))
	if fp != m.served && m.cfg.Tools != nil {
		m.served = fp
		m.built++
		m.next = out
	}
	return m.built
}

// handOver calls Tools, outside mu, until the set of generation gen (or a
// newer one) was handed over.
func (m *Manager) handOver(gen uint64) {
	m.mu.Lock()
	for m.handedOver < gen {
		if m.handing {
			wait := m.handed
			m.mu.Unlock()
			<-wait
			m.mu.Lock()
			continue
		}
		m.handing = true
		tools, newest := m.next, m.built
		m.mu.Unlock()
		m.cfg.Tools(tools)
		m.mu.Lock()
		m.handing, m.handedOver = false, newest
		close(m.handed)
		m.handed = make(chan struct{})
	}
	m.mu.Unlock()
}
