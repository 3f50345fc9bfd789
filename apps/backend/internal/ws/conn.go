package ws

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Conn is one authenticated server-side connection. Its methods are safe
// for concurrent use.
type Conn struct {
	id        string
	srv       *Server
	link      *link
	principal Principal
	ctx       context.Context
	cancel    context.CancelFunc
	sem       chan struct{} // in-flight request slots

	mu     sync.Mutex
	topics map[string]struct{}
}

func newConn(s *Server, wsConn *websocket.Conn, p Principal, parent context.Context) *Conn {
	ctx, cancel := context.WithCancel(parent)
	c := &Conn{
		id:        kanban.NewID(),
		srv:       s,
		principal: p,
		ctx:       ctx,
		cancel:    cancel,
		sem:       make(chan struct{}, s.cfg.MaxInFlight),
		topics:    make(map[string]struct{}),
		link: newLink(wsConn, linkConfig{
			readLimit:    s.cfg.ReadLimit,
			pingInterval: s.cfg.PingInterval,
			pongWait:     s.cfg.PongWait,
			writeWait:    s.cfg.WriteWait,
			sendBuffer:   s.cfg.SendBuffer,
		}),
	}
	c.link.onClose = cancel
	return c
}

// Principal returns what Authenticate returned for this connection.
func (c *Conn) Principal() Principal { return c.principal }

// RemoteAddr returns the address the connection came from (the peer of
// its TCP connection), for the audit log.
func (c *Conn) RemoteAddr() string {
	if a := c.link.ws.RemoteAddr(); a != nil {
		return a.String()
	}
	return ""
}

// ID returns the connection's random id (for logs and filters).
func (c *Conn) ID() string { return c.id }

// Context returns a context cancelled when the connection closes.
func (c *Conn) Context() context.Context { return c.ctx }

// Close closes the connection with 1000 (normal closure) and cancels its
// context, e.g. when its principal is revoked.
func (c *Conn) Close() {
	c.link.close(websocket.CloseNormalClosure, "", errConnClosed)
}

// Subscribe adds topics to the connection's subscriptions. Authorizing
// them is the caller's job.
func (c *Conn) Subscribe(topics ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range topics {
		c.topics[t] = struct{}{}
	}
}

// Unsubscribe removes topics; unknown topics are ignored.
func (c *Conn) Unsubscribe(topics ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range topics {
		delete(c.topics, t)
	}
}

// Topics returns the subscribed topics, sorted.
func (c *Conn) Topics() []string {
	c.mu.Lock()
	out := make([]string, 0, len(c.topics))
	for t := range c.topics {
		out = append(out, t)
	}
	c.mu.Unlock()
	sort.Strings(out)
	return out
}

func (c *Conn) subscribed(topic string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.topics[topic]
	return ok
}

// Send queues a notification to this connection. It never blocks; if the
// connection is closed the notification is dropped, and if its queue is
// full the connection is closed as a slow consumer.
func (c *Conn) Send(action string, payload any) {
	m, err := newMessage("", TypeNotification, action, payload)
	if err != nil {
		c.srv.log.ErrorContext(c.ctx, "ws send", slog.String("conn", c.id), slog.String("action", action), slog.String("error", err.Error()))
		return
	}
	c.send(m)
}

// send encodes and queues m; it reports false if m was not queued.
func (c *Conn) send(m Message) bool {
	b, err := encode(m)
	if err != nil {
		c.srv.log.ErrorContext(c.ctx, "ws send", slog.String("conn", c.id), slog.String("action", c.srv.logName(m.Action)), slog.String("error", err.Error()))
		return false
	}
	return c.link.enqueue(b)
}

// serve runs the connection: writer goroutine, OnConnect, the read loop on
// the calling goroutine, then cleanup and OnDisconnect.
func (c *Conn) serve() {
	go c.link.writeLoop()
	if c.srv.cfg.OnConnect != nil {
		c.srv.cfg.OnConnect(c)
	}
	c.link.readLoop(c.handleFrame)
	c.link.wait()
	c.srv.unregister(c)
	level := slog.LevelDebug
	if errors.Is(c.link.err(), errSlowConsumer) {
		level = slog.LevelWarn
	}
	c.srv.log.LogAttrs(c.ctx, level, "ws connection closed",
		slog.String("conn", c.id), slog.String("cause", c.link.err().Error()))
	if c.srv.cfg.OnDisconnect != nil {
		c.srv.cfg.OnDisconnect(c)
	}
}

// handleFrame validates one inbound frame and starts its request.
func (c *Conn) handleFrame(data []byte, isText bool) {
	if !isText {
		c.reject(Message{}, kanban.Errorf(kanban.CodeBadRequest, "malformed message"))
		return
	}
	req, kerr := decodeRequest(data)
	if kerr != nil {
		c.reject(req, kerr)
		return
	}
	if !c.srv.beginRequest() {
		c.reject(req, kanban.Errorf(kanban.CodeUnavailable, "server shutting down"))
		return
	}
	select {
	case c.sem <- struct{}{}:
	default:
		c.srv.inflight.Done()
		c.reject(req, kanban.Errorf(kanban.CodeUnavailable, "too many in-flight requests"))
		return
	}
	go c.run(req)
}

// reject answers a request that will not be dispatched.
func (c *Conn) reject(req Message, e *kanban.Error) {
	c.srv.log.DebugContext(c.ctx, "ws request rejected", slog.String("conn", c.id), slog.String("action", c.srv.logName(req.Action)),
		slog.String("code", string(e.Code)))
	c.send(errorMessage(req.ID, c.srv.echoName(req.Action), e))
}

// run executes one request on its own goroutine and queues its reply.
func (c *Conn) run(req Message) {
	defer c.srv.inflight.Done()
	defer func() { <-c.sem }()
	start := time.Now()
	res, err := c.dispatch(req)
	if c.ctx.Err() != nil {
		c.srv.log.DebugContext(c.ctx, "ws request abandoned: connection closed",
			slog.String("conn", c.id), slog.String("action", c.srv.logName(req.Action)), slog.Duration("duration", time.Since(start)))
		return
	}
	reply := c.reply(req, res, err)
	code := "OK"
	level := slog.LevelDebug
	if reply.Type == TypeError {
		code = string(kanban.ErrorCode(err))
		level = slog.LevelInfo
	}
	c.srv.log.LogAttrs(c.ctx, level, "ws request", slog.String("conn", c.id), slog.String("action", c.srv.logName(req.Action)),
		slog.Duration("duration", time.Since(start)), slog.String("code", code))
	c.send(reply)
}

// dispatch calls Dispatch, turning a panic into an error.
func (c *Conn) dispatch(req Message) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in dispatch: %v\n%s", r, debug.Stack())
		}
	}()
	return c.srv.cfg.Dispatch(c.ctx, c, kanban.Action(req.Action), req.Payload)
}

// reply builds the response or error envelope for a finished request. A
// non-domain error is logged with a reference that alone is sent.
func (c *Conn) reply(req Message, res any, err error) Message {
	if err == nil {
		m, merr := newMessage(req.ID, TypeResponse, c.srv.echoName(req.Action), res)
		if merr == nil {
			return m
		}
		err = merr
	}
	if kerr, ok := kanban.AsError(err); ok {
		return errorMessage(req.ID, c.srv.echoName(req.Action), kerr)
	}
	ref := newRef()
	c.srv.log.ErrorContext(c.ctx, "ws request failed", slog.String("conn", c.id), slog.String("action", c.srv.logName(req.Action)),
		slog.String("ref", ref), slog.String("error", err.Error()))
	return errorMessage(req.ID, c.srv.echoName(req.Action), kanban.Errorf(kanban.CodeInternal, "internal error (ref %s)", ref))
}

// echoName is the action a reply carries back: the request's when it is
// known, else empty (an unknown name is caller text).
func (s *Server) echoName(action string) string {
	if action != "" && s.cfg.Known(kanban.Action(action)) {
		return action
	}
	return ""
}

// logName is the label an action is logged with: its name when known,
// else "unknown".
func (s *Server) logName(action string) string {
	if n := s.echoName(action); n != "" {
		return n
	}
	return "unknown"
}
