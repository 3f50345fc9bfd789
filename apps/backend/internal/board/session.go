package board

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// sessions holds the signed-in board sessions in memory. Only a hash of
// each cookie value is kept; a restart of the backend signs everyone out.
// At most max sessions live at once: a new sign-in beyond that ends the
// oldest one.
type sessions struct {
	mu     sync.Mutex
	byHash map[[32]byte]*entry
	byID   map[string]*entry
	max    int
	ttl    time.Duration
	now    func() time.Time
}

// entry is one signed-in session. id names it to the application (which
// closes its WebSocket connections when it ends); it is not a credential.
type entry struct {
	id      string
	hash    [32]byte
	created time.Time
	expires time.Time
}

func newSessions(max int, ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{byHash: map[[32]byte]*entry{}, byID: map[string]*entry{}, max: max, ttl: ttl, now: now}
}

// issue starts a session and returns its cookie value and entry, plus the
// ids of the sessions that ended to make room or had expired.
func (s *sessions) issue() (string, *entry, []string) {
	value := randomHex(32)
	e := &entry{id: randomHex(8), hash: sha256.Sum256([]byte(value)), created: s.now()}
	e.expires = e.created.Add(s.ttl)
	s.mu.Lock()
	defer s.mu.Unlock()
	ended := s.sweepLocked()
	for len(s.byID) >= s.max {
		ended = append(ended, s.dropLocked(s.oldestLocked()))
	}
	s.byHash[e.hash] = e
	s.byID[e.id] = e
	return value, e, ended
}

// lookup returns the live session a cookie value names.
func (s *sessions) lookup(value string) (*entry, bool) {
	if value == "" {
		return nil, false
	}
	h := sha256.Sum256([]byte(value))
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byHash[h]
	if !ok || !s.now().Before(e.expires) {
		return nil, false
	}
	return e, true
}

// live reports whether the session id is signed in and unexpired.
func (s *sessions) live(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[id]
	return ok && s.now().Before(e.expires)
}

// revoke ends the session a cookie value names and returns its id.
func (s *sessions) revoke(value string) (string, bool) {
	h := sha256.Sum256([]byte(value))
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byHash[h]
	if !ok {
		return "", false
	}
	return s.dropLocked(e), true
}

// sweep ends the expired sessions and returns their ids.
func (s *sessions) sweep() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sweepLocked()
}

func (s *sessions) sweepLocked() []string {
	var ended []string
	now := s.now()
	for _, e := range s.byID {
		if !now.Before(e.expires) {
			ended = append(ended, s.dropLocked(e))
		}
	}
	return ended
}

func (s *sessions) oldestLocked() *entry {
	var old *entry
	for _, e := range s.byID {
		if old == nil || e.created.Before(old.created) {
			old = e
		}
	}
	return old
}

func (s *sessions) dropLocked(e *entry) string {
	delete(s.byHash, e.hash)
	delete(s.byID, e.id)
	return e.id
}

// randomHex returns n random bytes, hex-encoded.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error since Go 1.24.
	return hex.EncodeToString(b)
}
