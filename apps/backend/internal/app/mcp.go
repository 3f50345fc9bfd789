package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// MCPConfig configures `kandev mcp`: the MCP server of one agent session.
type MCPConfig struct {
	BackendURL string // http://127.0.0.1:38429
	SessionID  string
	Token      string // the session token
	// Listen, when set (loopback HOST:PORT), serves Streamable HTTP at /mcp
	// instead of stdio.
	Listen string
	Logger *slog.Logger
	Stdin  io.Reader
	Stdout io.Writer
	// Ready, if set, is called once serving (with the bound address for Listen).
	Ready func(addr string)
	// ProgressInterval is how often ask_user_question_kandev sends a
	// progress keep-alive while it waits (KANDEV_PROGRESS_INTERVAL; 0:
	// catalog.DefaultQuestionKeepAlive).
	ProgressInterval time.Duration
	// ReportInterval is how often the tool calls answered are reported to
	// the backend's metrics (0: DefaultReportInterval); the rest is
	// reported when the server closes.
	ReportInterval time.Duration
}

// compiledCatalog is the MCP catalog with every validator compiled, once
// per process: it is read-only once built, so the backend, the bridges and
// the CLI of one process (the tests run many) share it.
var compiledCatalog = sync.OnceValues(toolserver.Compile)

// SessionMCP is a session's MCP server connected to the backend.
type SessionMCP struct {
	cfg      MCPConfig
	client   *ws.Client
	connects atomic.Int32 // OnConnect calls: the first is the initial dial
	mu       sync.Mutex
	srv      *toolserver.Server
	upstream *upstream.Manager // nil without proxied servers

	// tally counts the tool calls answered until the next report;
	// reportLoop sends it until stop closes, then closes reported.
	tally     callTally
	base      context.Context // StartSessionMCP's, the last report's without its cancel
	stop      chan struct{}
	reported  chan struct{}
	closeOnce sync.Once
}

// RunMCP connects to the backend as the session, builds the session's
// tool set and serves it until stdin closes (stdio) or ctx ends. Mode
// switches pushed by the backend swap the tool set in place.
func RunMCP(ctx context.Context, cfg MCPConfig) error {
	m, err := StartSessionMCP(ctx, cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	if cfg.Listen != "" {
		return m.serveHTTP(ctx, m.srv)
	}
	if cfg.Ready != nil {
		cfg.Ready("")
	}
	return m.srv.ServeStdio(ctx, cfg.Stdin, cfg.Stdout)
}

// StartSessionMCP dials the backend with the session token, attaches to the
// session and builds its tool set. The caller serves Server() on a
// transport and calls Close when done.
func StartSessionMCP(ctx context.Context, cfg MCPConfig) (*SessionMCP, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.Token == "" {
		return nil, errors.New("no session token: pass --token-file or set KANDEV_SESSION_TOKEN")
	}
	wsURL, err := websocketURL(cfg.BackendURL)
	if err != nil {
		return nil, err
	}
	compiled, err := compiledCatalog()
	if err != nil {
		return nil, fmt.Errorf("build MCP catalog: %w", err)
	}
	if cfg.ReportInterval <= 0 {
		cfg.ReportInterval = DefaultReportInterval
	}
	m := &SessionMCP{cfg: cfg, base: ctx, stop: make(chan struct{}), reported: make(chan struct{})}
	m.client, err = ws.Dial(ctx, ws.ClientConfig{
		URL: wsURL, Token: cfg.Token, Reconnect: true, Logger: cfg.Logger,
		OnConnect:      m.reattach,
		OnNotification: m.notified,
	})
	if err != nil {
		if ws.IsUnauthorized(err) {
			return nil, errors.New("the backend refused the session token")
		}
		return nil, fmt.Errorf("connect to backend: %w", err)
	}
	prof, err := m.attach(ctx)
	if err != nil {
		_ = m.client.Close()
		return nil, err
	}
	srv, err := toolserver.New(toolserver.Config{Compiled: compiled, Backend: m.client, Profile: prof, Logger: cfg.Logger,
		KeepAlive: cfg.ProgressInterval, Observe: m.tally.observe})
	if err != nil {
		_ = m.client.Close()
		return nil, err
	}
	mgr, err := m.startUpstreams(ctx, srv)
	if err != nil {
		_ = m.client.Close()
		return nil, fmt.Errorf("read proxied MCP servers: %w", err)
	}
	m.mu.Lock()
	m.srv, m.upstream = srv, mgr
	m.mu.Unlock()
	go m.reportLoop(ctx, cfg.ReportInterval)
	return m, nil
}

// Server returns the session's MCP server.
func (m *SessionMCP) Server() *toolserver.Server { return m.srv }

// Upstream returns the proxied servers' manager, or nil when the session
// has none.
func (m *SessionMCP) Upstream() *upstream.Manager {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.upstream
}

// Close stops the proxied servers, reports the tool calls not reported
// yet (bounded by reportWait) and disconnects from the backend (which
// records the detach). Later calls do nothing.
func (m *SessionMCP) Close() {
	m.closeOnce.Do(func() {
		close(m.stop)
		<-m.reported
		if mgr := m.Upstream(); mgr != nil {
			mgr.Close()
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(m.base), reportWait)
		m.reportCalls(ctx)
		cancel()
		_ = m.client.Close()
	})
}

// attach subscribes to the session's events, marks it attached and
// returns its profile.
func (m *SessionMCP) attach(ctx context.Context) (catalog.Profile, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := m.client.Call(ctx, kanban.ActionSubscribe, SubscribeIn{Topics: []string{action.SessionTopic(m.cfg.SessionID)}}, nil); err != nil {
		return catalog.Profile{}, fmt.Errorf("subscribe to session: %w", err)
	}
	var p kanban.SessionProfile
	if err := m.client.Call(ctx, kanban.ActionSessionAttach, action.NoIn{}, &p); err != nil {
		return catalog.Profile{}, fmt.Errorf("attach session: %w", err)
	}
	if p.SessionID != m.cfg.SessionID {
		return catalog.Profile{}, errors.New("the session token belongs to another session than --session")
	}
	return catalog.Profile{Mode: p.Mode, Capabilities: p.Capabilities}, nil
}

// reattach runs after every (re)connect: the first is handled by RunMCP.
func (m *SessionMCP) reattach(ctx context.Context, _ *ws.Client) {
	if m.connects.Add(1) == 1 {
		return // StartSessionMCP attaches after the initial dial itself
	}
	m.mu.Lock()
	srv := m.srv
	m.mu.Unlock()
	if srv == nil {
		return
	}
	prof, err := m.attach(ctx)
	if err != nil {
		m.cfg.Logger.Warn("re-attach after reconnect failed", "err", err)
		return
	}
	m.apply(prof)
	if mgr := m.Upstream(); mgr != nil {
		mgr.Refresh() // the backend may have missed a report while we were away
	}
}

// notified follows mode switches pushed by the backend.
func (m *SessionMCP) notified(name string, payload json.RawMessage) {
	if name != kanban.EventSessionModeChanged.Name() {
		return
	}
	var p kanban.SessionProfile
	if err := json.Unmarshal(payload, &p); err != nil || p.SessionID != m.cfg.SessionID {
		return
	}
	m.apply(catalog.Profile{Mode: p.Mode, Capabilities: p.Capabilities})
}

func (m *SessionMCP) apply(p catalog.Profile) {
	m.mu.Lock()
	srv := m.srv
	m.mu.Unlock()
	if srv == nil {
		return
	}
	if err := srv.SetProfile(p); err != nil {
		m.cfg.Logger.Error("switch tool set", "mode", p.Mode, "err", err)
	}
}

func (m *SessionMCP) serveHTTP(ctx context.Context, srv *toolserver.Server) error {
	host, _, err := net.SplitHostPort(m.cfg.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return errors.New("--listen must be a loopback address (the endpoint acts with the session's token)")
	}
	ln, err := net.Listen("tcp", m.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	h := srv.HTTP(ctx, "/mcp", "", "")
	mux := http.NewServeMux()
	mux.Handle("/mcp", sameMachine(h.Streamable))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if m.cfg.Ready != nil {
		m.cfg.Ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	h.Shutdown(sctx)
	return hs.Shutdown(sctx)
}

// websocketURL turns the backend's http(s) base URL into its /ws URL.
func websocketURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", errors.New("--backend must be an http(s) URL such as http://127.0.0.1:38429")
	}
	switch u.Scheme {
	case "http", "ws":
		u.Scheme = "ws"
	case "https", "wss":
		u.Scheme = "wss"
	default:
		return "", errors.New("--backend must be an http(s) URL such as http://127.0.0.1:38429")
	}
	u.Path = "/ws"
	return u.String(), nil
}
