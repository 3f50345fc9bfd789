package app

import (
	"io"
	"net/http"
	"sync"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/board"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// boardConns tracks the WebSocket connections opened with a board session
// cookie, so that signing out (or the session's expiry) closes them.
type boardConns struct {
	mu    sync.Mutex
	conns map[*ws.Conn]string // connection → board session id
}

func (bc *boardConns) add(c *ws.Conn) {
	id, ok := c.Principal().(identity)
	if !ok || id.board == "" {
		return
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if bc.conns == nil {
		bc.conns = map[*ws.Conn]string{}
	}
	bc.conns[c] = id.board
}

func (bc *boardConns) remove(c *ws.Conn) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	delete(bc.conns, c)
}

// end closes every connection of a board session that ended.
func (bc *boardConns) end(sessionID string) {
	bc.mu.Lock()
	var closing []*ws.Conn
	for c, id := range bc.conns {
		if id == sessionID {
			closing = append(closing, c)
		}
	}
	bc.mu.Unlock()
	for _, c := range closing {
		c.Close()
	}
}

func (b *backend) newBoard() (*board.Board, error) {
	return board.New(board.Config{Operator: b.isOperator, OnEnd: func(sid string) { b.boardConns.end(sid); b.termConns.end(sid) }, Logger: b.log})
}

// wsEntry serves /ws. A request with an Authorization header authenticates
// with its bearer token (CLI, kandev mcp, scripts); a browser's upgrade
// carries the board's session cookie instead, and must come from the
// board's own origin.
func (b *backend) wsEntry() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || !b.board.HasCookie(r) {
			b.ws.ServeHTTP(w, r)
			return
		}
		b.board.Sweep()
		sid, ok := b.board.Session(r)
		switch {
		case !ok:
			refuse(w, http.StatusUnauthorized, `{"code":"UNAUTHORIZED","message":"the board session has ended; sign in again"}`)
		case !board.SameOrigin(r):
			refuse(w, http.StatusForbidden, `{"code":"FORBIDDEN","message":"a board connection must come from the board's own origin"}`)
		default:
			b.ws.ServeAuthenticated(w, r, identity{Principal: action.Principal{Kind: action.Operator}, board: sid})
		}
	})
}

func refuse(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
