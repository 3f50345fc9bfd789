package app

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// hub adapts the WebSocket server to kanban.Publisher.
type hub struct{ ws *ws.Server }

func (h *hub) Publish(topic, event string, payload any) {
	if h.ws != nil {
		h.ws.Publish(topic, event, payload)
	}
}

// identity is a connection's principal and the credential it proved, so
// that a session's token can be re-checked on every request.
type identity struct {
	action.Principal
	token string
	// board is the board session of a connection opened with the board's
	// cookie; it is re-checked on every request, like a session token.
	board string
}

// authenticate resolves a bearer token to the operator or a live session.
func (b *backend) authenticate(ctx context.Context, tok string) (ws.Principal, error) {
	if b.isOperator(tok) {
		return identity{Principal: action.Principal{Kind: action.Operator}}, nil
	}
	if tok == "" {
		return nil, kanban.Errorf(kanban.CodeUnauthorized, "bearer token required")
	}
	sess, err := b.liveSession(ctx, tok)
	if err != nil {
		return nil, err
	}
	p := action.Principal{Kind: action.Session, SessionID: sess.ID, TaskID: sess.TaskID, WorkspaceID: sess.WorkspaceID}
	return identity{Principal: p, token: tok}, nil
}

// liveSession resolves a session token to its session. A token that was
// rotated, whose session was deleted, or whose session has ended
// (completed, failed, cancelled) no longer authenticates.
func (b *backend) liveSession(ctx context.Context, tok string) (*kanban.Session, error) {
	sess, err := b.store.SessionByToken(ctx, tok)
	if err != nil {
		return nil, kanban.Errorf(kanban.CodeUnauthorized, "invalid token")
	}
	switch sess.State {
	case kanban.SessionCompleted, kanban.SessionFailed, kanban.SessionCancelled:
		return nil, kanban.Errorf(kanban.CodeUnauthorized, "the session has ended")
	}
	return sess, nil
}

// SubscribeIn is the payload of subscribe and unsubscribe.
type SubscribeIn struct {
	Topics []string `json:"topics"`
}

// subscribeSchema is the contract of subscribe and unsubscribe: 1 to
// kanban.MaxTopics topics, each "<kind>:<id>" of a workspace or a session.
func subscribeSchema() schema.S {
	topic := `^(workspace|session):` + kanban.IDPattern[1:]
	return schema.Obj("", schema.P{"topics": schema.Arr("Topics to follow or stop following.",
		schema.Str(`"workspace:<id>" or "session:<id>".`).Pattern(topic)).Items(1, kanban.MaxTopics)}, "topics")
}

// topicContracts compiles the contracts of subscribe and unsubscribe.
func topicContracts() (map[kanban.Action]*action.Contract, error) {
	out := map[kanban.Action]*action.Contract{}
	for _, name := range []kanban.Action{kanban.ActionSubscribe, kanban.ActionUnsubscribe} {
		c, err := action.NewContract[SubscribeIn](name, subscribeSchema())
		if err != nil {
			return nil, err
		}
		out[name] = c
	}
	return out, nil
}

// SubscribeOut is their result: the connection's topics afterwards.
type SubscribeOut struct {
	Topics []string `json:"topics"`
}

// knownAction reports whether name is a registered action (or subscribe,
// unsubscribe): only such a name is logged or carried back in a reply's
// action field; any other is caller-chosen text.
func (b *backend) knownAction(name kanban.Action) bool {
	_, ok := b.reg.Lookup(name)
	return ok || name == kanban.ActionSubscribe || name == kanban.ActionUnsubscribe
}

// dispatch runs one WebSocket request as the connection's principal.
func (b *backend) dispatch(ctx context.Context, c *ws.Conn, name kanban.Action, payload json.RawMessage) (any, error) {
	id, ok := c.Principal().(identity)
	if !ok {
		return nil, kanban.Errorf(kanban.CodeUnauthorized, "not authenticated")
	}
	p := id.Principal
	p.Via, p.From = "ws", c.RemoteAddr()
	if id.board != "" {
		p.Via = "board"
	}
	if id.board != "" && !b.board.Live(id.board) {
		return nil, kanban.Errorf(kanban.CodeUnauthorized, "the board session has ended; sign in again")
	}
	var sess *kanban.Session
	if p.Kind == action.Session {
		// Re-check the credential on every request: revocation (token
		// rotation, session deleted or ended) takes effect at once. The
		// session read here also authorizes the action (its mode).
		cur, err := b.liveSession(ctx, id.token)
		if err != nil || cur.ID != p.SessionID {
			return nil, kanban.Errorf(kanban.CodeUnauthorized, "session token revoked or session ended")
		}
		sess = cur
	}
	switch name {
	case kanban.ActionSubscribe, kanban.ActionUnsubscribe:
		return b.subscribe(c, p, name, payload)
	}
	var (
		res any
		err error
	)
	if sess != nil {
		res, err = b.reg.DispatchSession(ctx, p, sess, name, payload)
	} else {
		res, err = b.reg.Dispatch(ctx, p, name, payload)
	}
	if err == nil && name == kanban.ActionSessionAttach {
		b.attached.Store(c, p.SessionID)
	}
	return res, err
}

func (b *backend) subscribe(c *ws.Conn, p action.Principal, name kanban.Action, payload json.RawMessage) (any, error) {
	payload, err := b.topics[name].Check(payload)
	if err != nil {
		return nil, err
	}
	var in SubscribeIn
	if err := json.Unmarshal(payload, &in); err != nil {
		return nil, kanban.Errorf(kanban.CodeBadRequest, "payload does not match the action's shape")
	}
	for _, t := range in.Topics {
		if err := topicAllowed(p, t); err != nil {
			return nil, err
		}
	}
	if name == kanban.ActionSubscribe {
		c.Subscribe(in.Topics...)
	} else {
		c.Unsubscribe(in.Topics...)
	}
	return &SubscribeOut{Topics: c.Topics()}, nil
}

// topicAllowed checks that p may follow topic t (its form is the
// subscribe contract's): the operator any workspace or session; a session
// only its own session topic (workspace events carry plans and documents
// of tasks beyond a session's reach).
func topicAllowed(p action.Principal, t string) error {
	if p.Kind == action.Operator {
		return nil
	}
	if kind, id, _ := strings.Cut(t, ":"); kind == "session" && id == p.SessionID {
		return nil
	}
	return kanban.Errorf(kanban.CodeForbidden, "a session may only subscribe to its own session topic")
}

// disconnected records that a session's MCP server went away.
func (b *backend) disconnected(c *ws.Conn) {
	b.boardConns.remove(c)
	id, ok := b.attached.LoadAndDelete(c)
	if !ok || b.stillAttached(id) {
		return
	}
	// The detach is recorded even when the backend is stopping (its
	// connections close then).
	b.svc.Detached(context.WithoutCancel(c.Context()), id.(string))
}

// stillAttached reports whether another connection's MCP server is
// attached as the session (a fresh ACP session's, after
// reset_agent_context, while the old one's goes away).
func (b *backend) stillAttached(id any) bool {
	found := false
	b.attached.Range(func(_, v any) bool {
		found = v == id
		return !found
	})
	return found
}

// newWSServer builds the backend's WebSocket API (b.ws) and returns it.
func (b *backend) newWSServer() *ws.Server {
	b.ws = ws.NewServer(ws.ServerConfig{
		Authenticate: b.authenticate,
		Dispatch:     b.dispatch,
		ConnContext:  connContext,
		OnConnect:    b.boardConns.add,
		OnDisconnect: b.disconnected,
		Logger:       b.cfg.Logger,
		Known:        b.knownAction,
		// Room for any MCP call the 4 MiB gate admits once a session's
		// kandev mcp forwards it (ws.MaxRequestBytes).
		ReadLimit: ws.MaxRequestBytes,
		// Above the pending-question bound, so a session blocked in
		// question.ask keeps room for its other calls.
		MaxInFlight: 32,
		// The board's browsers negotiate it: a 1,000-task board is ~5×
		// smaller compressed.
		Compression: true,
	})
	return b.ws
}
