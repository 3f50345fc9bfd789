package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const (
	defaultCallTimeout = 30 * time.Second
	clientReadLimit    = 16 << 20
	backoffMin         = 100 * time.Millisecond
	backoffMax         = 5 * time.Second
)

var errClientClosed = errors.New("ws client closed")

// ClientConfig configures a Client. URL is required.
type ClientConfig struct {
	URL   string // ws://host:port/ws
	Token string // sent as Authorization: Bearer
	// OnNotification receives notifications in order, on one goroutine per
	// connection. It may call Call.
	OnNotification func(action string, payload json.RawMessage)
	// OnConnect runs on its own goroutine after every (re)connect, e.g. to
	// re-attach or resubscribe. ctx is cancelled by Close.
	OnConnect func(ctx context.Context, c *Client)
	// OnDisconnect runs when a connection is lost (not after Close).
	OnDisconnect func(err error)
	// Reconnect redials with exponential backoff (100ms doubling to 5s,
	// jittered) until Close.
	Reconnect   bool
	DialTimeout time.Duration // default 5s
	Logger      *slog.Logger
}

// Client is a WebSocket API client: it correlates responses with requests
// and, with Reconnect, survives backend restarts. Safe for concurrent use.
type Client struct {
	cfg    ClientConfig
	log    *slog.Logger
	dialer websocket.Dialer
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	mu      sync.Mutex
	cur     *clientConn // nil while disconnected
	closed  bool
	revoked bool // a reconnect was refused as unauthorized: calls fail for good
}

// clientConn is one connection of a Client and its pending calls.
type clientConn struct {
	link  *link
	notes chan Message

	mu      sync.Mutex
	pending map[string]chan Message
}

// Dial connects to the backend. The first connection must succeed: a
// rejected token gives an error for which IsUnauthorized is true. ctx
// bounds that first connection; the client then lives until Close (with
// ctx's values).
func Dial(ctx context.Context, cfg ClientConfig) (*Client, error) {
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		cfg:    cfg,
		log:    cfg.Logger,
		dialer: websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: cfg.DialTimeout},
	}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	cc, err := c.connect(ctx)
	if err != nil {
		c.cancel()
		return nil, err
	}
	c.cur = cc
	c.connected()
	go c.supervise(cc)
	return c, nil
}

// IsUnauthorized reports whether err means the backend rejected the token.
func IsUnauthorized(err error) bool {
	return kanban.ErrorCode(err) == kanban.CodeUnauthorized
}

// unavailable is the fail-fast error of calls made without a connection.
func unavailable() error {
	return kanban.Errorf(kanban.CodeUnavailable, "backend unavailable; retry")
}

// connect dials once and starts the connection's goroutines.
func (c *Client) connect(ctx context.Context) (*clientConn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
	defer cancel()
	header := http.Header{}
	if c.cfg.Token != "" {
		header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	wsConn, resp, err := c.dialer.DialContext(ctx, c.cfg.URL, header)
	if resp != nil && resp.Body != nil {
		// The handshake body is already buffered by gorilla; closing frees it.
		defer func() { _ = resp.Body.Close() }()
	}
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnauthorized {
			return nil, kanban.Errorf(kanban.CodeUnauthorized, "backend rejected the token")
		}
		return nil, fmt.Errorf("dial backend: %w", err)
	}
	cc := &clientConn{
		link: newLink(wsConn, linkConfig{
			readLimit:    clientReadLimit,
			pingInterval: defaultPingInterval,
			pongWait:     defaultPongWait,
			writeWait:    defaultWriteWait,
			sendBuffer:   256,
		}),
		notes:   make(chan Message, 64),
		pending: make(map[string]chan Message),
	}
	go cc.link.writeLoop()
	go c.readLoop(cc)
	go c.notifyLoop(cc)
	return cc, nil
}

// connected runs OnConnect for the connection just installed.
func (c *Client) connected() {
	if c.cfg.OnConnect != nil {
		go c.cfg.OnConnect(c.ctx, c)
	}
}

// readLoop routes responses to their callers and notifications to notes.
func (c *Client) readLoop(cc *clientConn) {
	defer close(cc.notes)
	cc.link.readLoop(func(data []byte, isText bool) {
		var m Message
		if !isText || json.Unmarshal(data, &m) != nil {
			c.log.Debug("ws client: ignored malformed frame")
			return
		}
		switch {
		case m.Type == TypeNotification:
			select {
			case cc.notes <- m:
			case <-cc.link.done:
			}
		case m.ID != "" && (m.Type == TypeResponse || m.Type == TypeError):
			cc.resolve(m)
		default:
			c.log.Debug("ws client: uncorrelated message", slog.String("type", m.Type), slog.String("action", m.Action))
		}
	})
}

// notifyLoop hands notifications to OnNotification in order.
func (c *Client) notifyLoop(cc *clientConn) {
	for m := range cc.notes {
		if c.cfg.OnNotification != nil {
			c.cfg.OnNotification(m.Action, m.Payload)
		}
	}
}

// supervise waits for each connection to end and, with Reconnect, dials
// the next one until Close.
func (c *Client) supervise(cc *clientConn) {
	for cc != nil {
		cc.link.wait()
		c.mu.Lock()
		if c.cur == cc {
			c.cur = nil
		}
		closed := c.closed
		c.mu.Unlock()
		if closed {
			return
		}
		c.log.Info("ws client: disconnected", slog.String("cause", cc.link.err().Error()))
		if c.cfg.OnDisconnect != nil {
			c.cfg.OnDisconnect(cc.link.err())
		}
		if !c.cfg.Reconnect {
			return
		}
		cc = c.reconnect()
	}
}

// reconnect dials with jittered exponential backoff until it succeeds
// (returning the installed connection) or the client is closed (nil).
func (c *Client) reconnect() *clientConn {
	delay := backoffMin
	for {
		t := time.NewTimer(delay/2 + rand.N(delay/2+1)) //nolint:gosec // backoff jitter needs no cryptographic randomness
		select {
		case <-c.ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		cc, err := c.connect(c.ctx)
		if err == nil {
			c.mu.Lock()
			if c.closed {
				c.mu.Unlock()
				cc.link.close(websocket.CloseNormalClosure, "", errClientClosed)
				cc.link.wait()
				return nil
			}
			c.cur = cc
			c.mu.Unlock()
			c.log.Info("ws client: reconnected")
			c.connected()
			return cc
		}
		if IsUnauthorized(err) {
			// The token was revoked (rotated, session ended): retrying
			// cannot help, so stop and say so on every call.
			c.mu.Lock()
			c.revoked = true
			c.mu.Unlock()
			c.log.Warn("ws client: the backend refused the token; not reconnecting")
			return nil
		}
		c.log.LogAttrs(c.ctx, slog.LevelDebug, "ws client: reconnect failed", slog.String("error", err.Error()))
		delay = min(delay*2, backoffMax)
	}
}

// Connected reports whether the client currently has a live connection.
func (c *Client) Connected() bool {
	c.mu.Lock()
	cc := c.cur
	c.mu.Unlock()
	if cc == nil {
		return false
	}
	select {
	case <-cc.link.done:
		return false
	default:
		return true
	}
}

// MaxRequestBytes is the largest request the client sends: the backend's
// read limit (8 MiB: room for any MCP call the 4 MiB gate admits).
const MaxRequestBytes = 8 << 20

// Call sends a request and waits for its response, decoding the payload
// into out when out is non-nil. Without a deadline on ctx it waits at most
// 30s. Error responses are returned as *kanban.Error; with no connection, or
// if the connection drops while waiting, it returns UNAVAILABLE at once.
func (c *Client) Call(ctx context.Context, action kanban.Action, payload any, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultCallTimeout)
		defer cancel()
	}
	c.mu.Lock()
	cc, closed, revoked := c.cur, c.closed, c.revoked
	c.mu.Unlock()
	if closed {
		return errClientClosed
	}
	if revoked {
		return kanban.Errorf(kanban.CodeUnauthorized, "the backend no longer accepts this token (rotated, or the session ended); restart with a fresh token")
	}
	if cc == nil {
		return unavailable()
	}
	id := kanban.NewID()
	m, err := newMessage(id, TypeRequest, string(action), payload)
	if err != nil {
		return err
	}
	b, err := encode(m)
	if err != nil {
		return err
	}
	if len(b) > MaxRequestBytes {
		// The server would close the connection (1009) on a larger frame:
		// refuse here, with an error that says retrying cannot help.
		return kanban.Errorf(kanban.CodeValidation, "request too large: the backend accepts at most %d bytes per message", MaxRequestBytes)
	}
	ch := cc.register(id)
	defer cc.forget(id)
	if err := cc.link.enqueueWait(ctx, b); err != nil {
		if errors.Is(err, errLinkClosed) {
			return unavailable()
		}
		return fmt.Errorf("call %s: %w", action, err)
	}
	select {
	case r := <-ch:
		return decodeReply(r, out)
	case <-cc.link.done:
		select {
		case r := <-ch: // the answer beat the disconnect
			return decodeReply(r, out)
		default:
			return unavailable()
		}
	case <-ctx.Done():
		return fmt.Errorf("call %s: %w", action, ctx.Err())
	}
}

// decodeReply turns a response into out, or an error envelope into a
// *kanban.Error.
func decodeReply(r Message, out any) error {
	switch r.Type {
	case TypeResponse:
		if out == nil || len(r.Payload) == 0 {
			return nil
		}
		if err := json.Unmarshal(r.Payload, out); err != nil {
			return fmt.Errorf("decode %s response: %w", r.Action, err)
		}
		return nil
	case TypeError:
		var p ErrorPayload
		if err := json.Unmarshal(r.Payload, &p); err != nil {
			return fmt.Errorf("decode %s error: %w", r.Action, err)
		}
		e := &kanban.Error{Code: p.Code, Message: p.Message}
		if f, ok := p.Details["field"].(string); ok {
			e.Field = f
		}
		if n, ok := p.Details["retry_after"].(float64); ok && n >= 1 && n <= 3600 {
			e.RetryAfter = int(n)
		}
		return e
	default:
		return fmt.Errorf("unexpected %q reply to %s", r.Type, r.Action)
	}
}

func (cc *clientConn) register(id string) chan Message {
	ch := make(chan Message, 1)
	cc.mu.Lock()
	cc.pending[id] = ch
	cc.mu.Unlock()
	return ch
}

func (cc *clientConn) forget(id string) {
	cc.mu.Lock()
	delete(cc.pending, id)
	cc.mu.Unlock()
}

// resolve delivers m to the call waiting for its id, if any.
func (cc *clientConn) resolve(m Message) {
	cc.mu.Lock()
	ch, ok := cc.pending[m.ID]
	delete(cc.pending, m.ID)
	cc.mu.Unlock()
	if ok {
		ch <- m // buffered 1 and removed from pending: never blocks
	}
}

// Close closes the connection (with 1000) and stops reconnecting. Calls in
// progress return UNAVAILABLE. It does not wait for user callbacks.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cc := c.cur
	c.cur = nil
	c.mu.Unlock()
	c.cancel()
	if cc != nil {
		cc.link.close(websocket.CloseNormalClosure, "", errClientClosed)
		cc.link.wait()
	}
	return nil
}
