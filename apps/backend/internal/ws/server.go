package ws

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Principal is the authenticated identity of a connection. It is opaque to
// ws: the application's Authenticate returns it and its Dispatch reads it.
type Principal = any

// ServerConfig configures a Server. Authenticate and Dispatch are required.
type ServerConfig struct {
	// Authenticate resolves the bearer token of the upgrade request. Any
	// error answers HTTP 401 with WWW-Authenticate: Bearer and no upgrade.
	Authenticate func(ctx context.Context, token string) (Principal, error)
	// Dispatch runs one request and returns the response payload (marshalled
	// to JSON; nil omits it) or an error. A *kanban.Error (possibly wrapped)
	// is sent with its code and message; any other error is sent as
	// INTERNAL_ERROR "internal error (ref …)" and logged. ctx is the
	// connection's context: Dispatch must return soon after it is cancelled.
	Dispatch func(ctx context.Context, c *Conn, action kanban.Action, payload json.RawMessage) (any, error)
	// ConnContext, when set, derives a connection's context (which every
	// request on it and every line logged about it uses) from the upgrade
	// request's and the principal, e.g. to name the caller in the log.
	ConnContext func(ctx context.Context, p Principal) context.Context
	// OnConnect runs after the upgrade, before the first request is read.
	OnConnect func(c *Conn)
	// OnDisconnect runs once the connection's reader and writer have stopped.
	OnDisconnect func(c *Conn)
	Logger       *slog.Logger
	// Known reports whether an action name is one the application serves.
	// Action names are caller-chosen text: only a known one is logged and
	// carried back in a reply's action field; any other is logged as
	// "unknown" and answered with an empty action. Default: none is known.
	Known func(action kanban.Action) bool
	// ReadLimit caps one inbound message (default 1 MiB); a larger message
	// closes the connection with 1009.
	ReadLimit int64
	// MaxInFlight caps concurrent requests per connection (default 16);
	// requests beyond it get UNAVAILABLE at once.
	MaxInFlight int
	// PingInterval (default 20s), PongWait (read deadline, default 60s) and
	// WriteWait (per write, default 10s).
	PingInterval, PongWait, WriteWait time.Duration
	// Compression offers permessage-deflate to clients that ask for it
	// (browsers do; the Go client does not), so large list pages cross the
	// wire compressed.
	Compression bool
	// SendBuffer is the outbound queue per connection (default 256). A
	// connection whose queue is full is closed as a slow consumer.
	SendBuffer int
}

// Server serves the WebSocket API on one endpoint and fans notifications
// out to its connections.
type Server struct {
	cfg      ServerConfig
	log      *slog.Logger
	upgrader websocket.Upgrader

	mu       sync.Mutex
	conns    map[*Conn]struct{}
	closed   bool // no new connections
	draining bool // no new requests
	// wg counts connection goroutines; inflight counts running requests.
	// Both are only incremented under mu while the server is open.
	wg       sync.WaitGroup
	inflight sync.WaitGroup
}

var (
	// errServerClosed is the cause recorded on connections closed by Close.
	errServerClosed = errors.New("server closed")
	// errConnClosed is the cause recorded by Conn.Close.
	errConnClosed = errors.New("connection closed by server")
)

// NewServer returns a Server. It panics if Authenticate or Dispatch is nil.
func NewServer(cfg ServerConfig) *Server {
	if cfg.Authenticate == nil || cfg.Dispatch == nil {
		panic("ws: ServerConfig.Authenticate and Dispatch are required")
	}
	if cfg.Known == nil {
		cfg.Known = func(kanban.Action) bool { return false }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ReadLimit <= 0 {
		cfg.ReadLimit = 1 << 20
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 16
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = defaultPingInterval
	}
	if cfg.PongWait <= 0 {
		cfg.PongWait = defaultPongWait
	}
	if cfg.WriteWait <= 0 {
		cfg.WriteWait = defaultWriteWait
	}
	if cfg.SendBuffer <= 0 {
		cfg.SendBuffer = 256
	}
	return &Server{
		cfg: cfg,
		log: cfg.Logger,
		// CheckOrigin nil: gorilla's same-origin check, which rejects
		// cross-origin browsers and admits clients that send no Origin.
		upgrader: websocket.Upgrader{HandshakeTimeout: cfg.WriteWait, EnableCompression: cfg.Compression},
		conns:    make(map[*Conn]struct{}),
	}
}

// ServeHTTP authenticates the request and upgrades it to a WebSocket
// connection, then serves that connection until it closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := bearerToken(r)
	if !ok {
		writeUnauthorized(w, "missing bearer token")
		return
	}
	principal, err := s.cfg.Authenticate(r.Context(), token)
	if err != nil {
		if code := kanban.ErrorCode(err); code == kanban.CodeInternal {
			s.log.ErrorContext(r.Context(), "ws authenticate failed", slog.String("error", err.Error()))
		} else {
			s.log.DebugContext(r.Context(), "ws auth rejected", slog.String("code", string(code)))
		}
		writeUnauthorized(w, "invalid or expired token")
		return
	}
	s.ServeAuthenticated(w, r, principal)
}

// ServeAuthenticated upgrades a request that the caller has already
// authenticated by other means than a bearer token (the board's session
// cookie) and serves the connection as principal. The upgrader's
// same-origin check still applies.
func (s *Server) ServeAuthenticated(w http.ResponseWriter, r *http.Request, principal Principal) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "server shutting down", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	wsConn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		// The upgrader has already answered with an HTTP error.
		s.log.DebugContext(r.Context(), "ws upgrade failed", slog.String("error", err.Error()))
		return
	}
	ctx := context.WithoutCancel(r.Context())
	if s.cfg.ConnContext != nil {
		ctx = s.cfg.ConnContext(ctx, principal)
	}
	c := newConn(s, wsConn, principal, ctx)
	if !s.register(c) {
		c.link.close(websocket.CloseGoingAway, "server shutting down", errServerClosed)
	}
	c.serve()
}

// bearerToken extracts the token of an "Authorization: Bearer <t>" header.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func writeUnauthorized(w http.ResponseWriter, msg string) {
	body, err := json.Marshal(ErrorPayload{Code: kanban.CodeUnauthorized, Message: msg})
	if err != nil {
		body = []byte(`{"code":"UNAUTHORIZED","message":"unauthorized"}`)
	}
	w.Header().Set("WWW-Authenticate", "Bearer")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	// A failed write means the client is gone; there is no one left to tell.
	_, _ = w.Write(body)
}

func (s *Server) register(c *Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) unregister(c *Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// beginRequest counts a request in flight unless the server is draining.
func (s *Server) beginRequest() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return false
	}
	s.inflight.Add(1)
	return true
}

// Connections is how many connections the server holds now.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Server) snapshot() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// Publish sends a notification to every connection subscribed to topic.
func (s *Server) Publish(topic string, action string, payload any) {
	s.Notify(func(c *Conn) bool { return c.subscribed(topic) }, action, payload)
}

// Notify sends a notification to every connection for which filter returns
// true. The payload is marshalled once, and not at all when no connection
// is to receive it; a marshalling error is logged.
func (s *Server) Notify(filter func(*Conn) bool, action string, payload any) {
	conns := s.snapshot()
	to := conns[:0]
	for _, c := range conns {
		if filter(c) {
			to = append(to, c)
		}
	}
	if len(to) == 0 {
		return
	}
	m, err := newMessage("", TypeNotification, action, payload)
	if err != nil {
		s.log.Error("ws notify", slog.String("action", action), slog.String("error", err.Error()))
		return
	}
	b, err := encode(m)
	if err != nil {
		s.log.Error("ws notify", slog.String("action", action), slog.String("error", err.Error()))
		return
	}
	for _, c := range to {
		c.link.enqueue(b)
	}
}

// Shutdown stops accepting connections and requests (new requests get
// UNAVAILABLE), waits for running requests until ctx ends, then closes every
// connection like Close. It returns ctx's error if the wait was cut short.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed, s.draining = true, true
	s.mu.Unlock()
	idle := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(idle)
	}()
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.Close()
	return err
}

// Close closes every connection with 1001 (going away), cancelling their
// contexts, and waits for their goroutines and running requests to end.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed, s.draining = true, true
	s.mu.Unlock()
	for _, c := range s.snapshot() {
		c.link.close(websocket.CloseGoingAway, "server shutting down", errServerClosed)
	}
	s.wg.Wait()
	s.inflight.Wait()
}
