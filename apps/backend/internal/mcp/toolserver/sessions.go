package toolserver

import (
	"container/list"
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// Default bounds of a Streamable HTTP endpoint's sessions.
const (
	DefaultMaxSessions = 1000
	DefaultSessionIdle = 30 * time.Minute
)

// SessionLimits bound the sessions a Streamable HTTP endpoint keeps for
// clients that initialize and never send DELETE: at most Max (the least
// recently used is dropped beyond it), none unused for longer than Idle.
// A dropped session's id keeps working: the endpoints keep no per-session
// state a tool call depends on, so a later request with it is served as a
// fresh session (as after a backend restart).
type SessionLimits struct {
	Max  int
	Idle time.Duration
}

func (l SessionLimits) withDefaults() SessionLimits {
	if l.Max <= 0 {
		l.Max = DefaultMaxSessions
	}
	if l.Idle <= 0 {
		l.Idle = DefaultSessionIdle
	}
	return l
}

// sessionTable is the endpoint's session id manager: it issues ids on
// initialize, tracks their use, and drops the least recently used past
// the cap. The idle expiry is mcp-go's sweeper (WithSessionIdleTTL),
// which calls Terminate.
type sessionTable struct {
	mu   sync.Mutex
	max  int
	lru  *list.List // of ids, most recently used first
	byID map[string]*list.Element
	// drop terminates a session through the transport (as a client's
	// DELETE would), freeing everything mcp-go keeps for it.
	drop func(id string)
	// format checks ids as before: well-formed ids are accepted.
	format mcpserver.StatelessGeneratingSessionIdManager
}

var _ mcpserver.SessionIdManager = (*sessionTable)(nil)

func newSessionTable(max int) *sessionTable {
	return &sessionTable{max: max, lru: list.New(), byID: map[string]*list.Element{}}
}

// Generate issues the id of a new session, dropping the least recently
// used sessions beyond the cap.
func (t *sessionTable) Generate() string {
	id := "mcp-session-" + uuid.NewString()
	t.mu.Lock()
	t.byID[id] = t.lru.PushFront(id)
	var evict []string
	for t.lru.Len() > t.max {
		e := t.lru.Back()
		old := e.Value.(string)
		t.lru.Remove(e)
		delete(t.byID, old)
		evict = append(evict, old)
	}
	drop := t.drop
	t.mu.Unlock()
	if drop != nil {
		for _, old := range evict {
			drop(old)
		}
	}
	return id
}

// Validate accepts well-formed ids (so clients survive restarts and
// drops) and marks a tracked session as used.
func (t *sessionTable) Validate(id string) (bool, error) {
	if _, err := t.format.Validate(id); err != nil {
		return false, err
	}
	t.mu.Lock()
	if e, ok := t.byID[id]; ok {
		t.lru.MoveToFront(e)
	}
	t.mu.Unlock()
	return false, nil
}

// Terminate forgets a session (DELETE, the idle sweeper, or a drop).
func (t *sessionTable) Terminate(id string) (bool, error) {
	t.mu.Lock()
	if e, ok := t.byID[id]; ok {
		t.lru.Remove(e)
		delete(t.byID, id)
	}
	t.mu.Unlock()
	return false, nil
}

// len is the number of tracked sessions.
func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lru.Len()
}

// dropper returns a drop function that terminates a session through h,
// with the DELETE a client would send, under ctx.
func dropper(ctx context.Context, h http.Handler, path string) func(string) {
	return func(id string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, path, http.NoBody)
		if err != nil {
			return
		}
		req.Header.Set("Mcp-Session-Id", id)
		h.ServeHTTP(discardResponse{h: http.Header{}}, req)
	}
}

// discardResponse is the response writer of an internal request.
type discardResponse struct{ h http.Header }

func (d discardResponse) Header() http.Header         { return d.h }
func (d discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (d discardResponse) WriteHeader(int)             {}
