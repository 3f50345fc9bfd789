package app

import (
	"context"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/board"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/terminal"
)

// TerminalConfig configures the operator's terminals (see
// internal/terminal); zero limits take its defaults.
type TerminalConfig struct {
	// Off turns terminals off (--terminal=false): GET /terminal answers
	// 404 and no shell is ever started.
	Off bool
	// Shell is the shell's absolute path (--terminal-shell); empty: the
	// backend's $SHELL, else /bin/sh.
	Shell                string
	MaxPerTask, MaxTotal int
	IdleTimeout, Grace   time.Duration
}

// newTerminals starts the terminal manager (unless turned off): its
// shells end with their task's agents and when the backend stops.
func (b *backend) newTerminals() error {
	tc := b.cfg.Terminal
	if tc.Off {
		return nil
	}
	shell, err := terminal.Shell(tc.Shell)
	if err != nil {
		return err
	}
	b.term, err = terminal.New(terminal.Config{Shell: shell, Env: terminal.Environ(os.Environ()), MaxPerTask: tc.MaxPerTask,
		MaxTotal: tc.MaxTotal, IdleTimeout: tc.IdleTimeout, Grace: tc.Grace, Logger: b.log})
	if err != nil {
		return err
	}
	b.life.push("terminals", b.term.Close)
	b.events.React(func(ev kanban.DomainEvent) {
		if r, ok := ev.(kanban.TaskReleased); ok {
			b.term.CloseTask(r.TaskID, "the task's agents were stopped (task stopped, archived or deleted)")
		}
	})
	return nil
}

// terminalEntry serves GET /terminal, the terminal protocol over a
// WebSocket (internal/terminal's stream.go), for the operator only: the
// operator's bearer token, or a live board session from the board's own
// origin (the upgrader also refuses a cross-origin browser). A session
// token never opens one.
func (b *backend) terminalEntry() http.Handler {
	up := websocket.Upgrader{ReadBufferSize: 16 << 10, WriteBufferSize: 16 << 10}
	operator := action.Principal{Kind: action.Operator}
	resolve := func(ctx context.Context, taskID string) (string, error) { return b.svc.WorkDir(ctx, operator, taskID) }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b.term == nil {
			refuse(w, http.StatusNotFound, `{"code":"NOT_FOUND","message":"terminals are turned off on this backend (--terminal=false)"}`)
			return
		}
		sid, ok := b.terminalCaller(w, r)
		if !ok {
			return
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // the upgrader answered
		}
		ctx, cancel := context.WithCancelCause(b.life.ctx)
		defer cancel(nil)
		defer b.termConns.add(sid, cancel)()
		b.term.Serve(ctx, conn, resolve)
	})
}

// terminalCaller authenticates a terminal request as the operator,
// answering the refusal itself; it returns the board session ("" for a
// bearer token).
func (b *backend) terminalCaller(w http.ResponseWriter, r *http.Request) (string, bool) {
	if r.Header.Get("Authorization") != "" || !b.board.HasCookie(r) {
		if !b.isOperator(bearer(r)) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kandev"`)
			refuse(w, http.StatusUnauthorized, `{"code":"UNAUTHORIZED","message":"the terminal needs the operator's token or board session"}`)
			return "", false
		}
		return "", true
	}
	b.board.Sweep()
	sid, ok := b.board.Session(r)
	switch {
	case !ok:
		refuse(w, http.StatusUnauthorized, `{"code":"UNAUTHORIZED","message":"the board session has ended; sign in again"}`)
	case !board.SameOrigin(r):
		refuse(w, http.StatusForbidden, `{"code":"FORBIDDEN","message":"a board connection must come from the board's own origin"}`)
	default:
		return sid, true
	}
	return "", false
}

// termConns ends the terminal connections of a board session that ended
// (signed out or expired); their shells live on for the grace period.
type termConns struct {
	mu     sync.Mutex
	next   int
	cancel map[int]termConn
}

type termConn struct {
	board  string
	cancel context.CancelCauseFunc
}

// add records a connection of board session sid ("" : a bearer token's)
// and returns its removal.
func (tc *termConns) add(sid string, cancel context.CancelCauseFunc) func() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.cancel == nil {
		tc.cancel = map[int]termConn{}
	}
	tc.next++
	n := tc.next
	tc.cancel[n] = termConn{board: sid, cancel: cancel}
	return func() {
		tc.mu.Lock()
		defer tc.mu.Unlock()
		delete(tc.cancel, n)
	}
}

func (tc *termConns) end(sid string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, c := range tc.cancel {
		if c.board == sid {
			c.cancel(kanban.Errorf(kanban.CodeUnauthorized, "the board session has ended; sign in again"))
		}
	}
}
