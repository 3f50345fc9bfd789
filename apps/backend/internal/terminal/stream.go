package terminal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The terminal protocol, one WebSocket per client. The client's first
// message is a text frame:
//
//	{"type":"open","task_id":"…","cols":80,"rows":24}
//	{"type":"attach","task_id":"…","terminal_id":"…","cols":80,"rows":24}
//
// (attach: a shell of that task still open, within its grace period).
// The server answers {"type":"ready","terminal_id":"…"}, then the output
// kept so far and what follows, as binary frames. The client sends its
// keystrokes as binary frames (at most MaxInput bytes each) and
// {"type":"resize","cols":…,"rows":…} or {"type":"close"} as text
// frames. When the shell ends the server sends {"type":"exit","code":N,
// "reason":"…"} and closes; a refusal is {"type":"error","code":"…",
// "message":"…"}, never echoing what the client sent.

// Timing of a terminal connection.
const (
	helloWait  = 10 * time.Second
	writeWait  = 10 * time.Second
	pingEvery  = 30 * time.Second
	readWait   = 75 * time.Second
	noticeSlot = 4
)

// Resolver finds the working directory of the task a client names, or
// says (a *kanban.Error) why it cannot have a terminal.
type Resolver func(ctx context.Context, taskID string) (dir string, err error)

// hello is a client's first message; control its later text messages.
type hello struct {
	Type       string `json:"type"`
	TaskID     string `json:"task_id"`
	TerminalID string `json:"terminal_id"`
	Cols       int    `json:"cols"`
	Rows       int    `json:"rows"`
}

type control struct {
	Type string `json:"type"`
	Cols int    `json:"cols"`
	Rows int    `json:"rows"`
}

// Serve runs the terminal protocol on conn (already authenticated as
// the operator) until the client leaves, the shell ends or ctx ends (the
// client is told ctx's cause when it is a *kanban.Error); it closes
// conn. A client that leaves detaches: the shell lives on for the
// grace period, for the same page to reattach.
func (m *Manager) Serve(ctx context.Context, conn *websocket.Conn, resolve Resolver) {
	defer func() { _ = conn.Close() }()
	conn.SetReadLimit(MaxInput + 1024)
	s, err := m.handshake(ctx, conn, resolve)
	if err != nil {
		writeNotice(conn, errorNotice(err))
		return
	}
	backlog, c := s.Attach()
	defer c.Detach()
	notices := make(chan []byte, noticeSlot)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		m.writeLoop(ctx, conn, s, c, backlog, notices)
	}()
	m.readLoop(conn, s, notices)
	c.Detach()
	<-wrote
}

// handshake reads the client's hello and opens or finds its shell.
func (m *Manager) handshake(ctx context.Context, conn *websocket.Conn, resolve Resolver) (*Session, error) {
	_ = conn.SetReadDeadline(time.Now().Add(helloWait))
	kind, raw, err := conn.ReadMessage()
	if err != nil {
		return nil, kanban.Errorf(kanban.CodeBadRequest, "no opening message")
	}
	var h hello
	if kind != websocket.TextMessage || strictDecode(raw, &h) != nil || h.TaskID == "" {
		return nil, kanban.Errorf(kanban.CodeBadRequest, `the first message must be {"type":"open"|"attach","task_id":…,"cols":…,"rows":…}`)
	}
	dir, err := resolve(ctx, h.TaskID)
	if err != nil {
		return nil, err
	}
	switch h.Type {
	case "open":
		return m.Open(h.TaskID, dir, h.Cols, h.Rows)
	case "attach":
		s, err := m.Lookup(h.TerminalID, h.TaskID)
		if err != nil {
			return nil, err
		}
		return s, s.Resize(h.Cols, h.Rows)
	}
	return nil, kanban.Errorf(kanban.CodeBadRequest, `type must be "open" or "attach"`)
}

// readLoop hands the client's input and controls to s until the
// connection fails or the client closes the terminal.
func (m *Manager) readLoop(conn *websocket.Conn, s *Session, notices chan<- []byte) {
	_ = conn.SetReadDeadline(time.Now().Add(readWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(readWait)) })
	for {
		kind, raw, err := conn.ReadMessage()
		if err != nil {
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(readWait))
		if kind == websocket.BinaryMessage {
			err = s.Write(raw)
		} else {
			err = s.control(raw)
		}
		if err != nil {
			select {
			case notices <- errorNotice(err):
			default:
			}
		}
	}
}

// control applies one text message of the client.
func (s *Session) control(raw []byte) error {
	var c control
	if err := strictDecode(raw, &c); err != nil {
		return kanban.Errorf(kanban.CodeBadRequest, `a text message must be {"type":"resize","cols":…,"rows":…} or {"type":"close"}`)
	}
	switch c.Type {
	case "resize":
		return s.Resize(c.Cols, c.Rows)
	case "close":
		s.Kill()
		return nil
	}
	return kanban.Errorf(kanban.CodeBadRequest, `type must be "resize" or "close"`)
}

// writeLoop is the connection's one writer: ready, the backlog, then the
// output, notices and pings until the shell ends (exit), another client
// takes over, ctx ends or a write fails.
func (m *Manager) writeLoop(ctx context.Context, conn *websocket.Conn, s *Session, c *Client, backlog []byte, notices <-chan []byte) {
	defer func() { _ = conn.Close() }() // ends readLoop
	ready, _ := json.Marshal(map[string]string{"type": "ready", "terminal_id": s.ID})
	if !write(conn, websocket.TextMessage, ready) || (len(backlog) > 0 && !write(conn, websocket.BinaryMessage, backlog)) {
		return
	}
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		select {
		case b := <-c.Out:
			if !write(conn, websocket.BinaryMessage, b) {
				return
			}
		case n := <-notices:
			if !write(conn, websocket.TextMessage, n) {
				return
			}
		case <-s.done:
			for drained := false; !drained; {
				select {
				case b := <-c.Out:
					drained = !write(conn, websocket.BinaryMessage, b)
				default:
					drained = true
				}
			}
			exit, _ := json.Marshal(map[string]any{"type": "exit", "code": s.exit, "reason": s.why})
			writeNotice(conn, exit)
			return
		case <-c.Gone:
			writeNotice(conn, errorNotice(kanban.Errorf(kanban.CodeConflict, "the terminal was opened in another window")))
			return
		case <-ctx.Done():
			why := error(kanban.Errorf(kanban.CodeUnavailable, "the backend is shutting down"))
			if e, ok := kanban.AsError(context.Cause(ctx)); ok {
				why = e // the application said why it ended the connection
			}
			writeNotice(conn, errorNotice(why))
			return
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)) != nil {
				return
			}
		}
	}
}

func write(conn *websocket.Conn, kind int, b []byte) bool {
	_ = conn.SetWriteDeadline(time.Now().Add(writeWait))
	return conn.WriteMessage(kind, b) == nil
}

// writeNotice sends a last text message and a normal close.
func writeNotice(conn *websocket.Conn, b []byte) {
	if write(conn, websocket.TextMessage, b) {
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(writeWait))
	}
}

// errorNotice is err as the protocol's error message: a domain error's
// code and text, else "internal error".
func errorNotice(err error) []byte {
	e, ok := kanban.AsError(err)
	if !ok {
		e = kanban.Errorf(kanban.CodeInternal, "internal error")
	}
	b, _ := json.Marshal(map[string]string{"type": "error", "code": string(e.Code), "message": e.Message})
	return b
}

// strictDecode decodes one JSON object into v, refusing unknown keys and
// trailing data.
func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}
