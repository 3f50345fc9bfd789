package board

import (
	"testing"
	"time"
)

// TestSessions: a session lives until its TTL, ends on revoke, and the
// oldest is evicted when the limit is reached; OnEnd hears of each.
func TestSessions(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var ended []string
	b, err := New(Config{Operator: func(string) bool { return true }, SessionTTL: time.Hour, MaxSessions: 2,
		Now: func() time.Time { return now }, OnEnd: func(id string) { ended = append(ended, id) }})
	if err != nil {
		t.Fatal(err)
	}
	v1, e1, _ := b.sessions.issue()
	now = now.Add(time.Minute)
	_, e2, _ := b.sessions.issue()
	if got, ok := b.sessions.lookup(v1); !ok || got.id != e1.id || !b.Live(e1.id) {
		t.Fatal("a fresh session is not live")
	}
	now = now.Add(time.Minute)
	_, e3, gone := b.sessions.issue()
	if len(gone) != 1 || gone[0] != e1.id || b.Live(e1.id) {
		t.Fatalf("eviction: got %v, want the oldest session %s ended", gone, e1.id)
	}
	if _, ok := b.sessions.lookup(v1); ok {
		t.Fatal("an evicted cookie still works")
	}
	now = now.Add(time.Hour)
	if b.Live(e2.id) || b.Live(e3.id) {
		t.Fatal("sessions outlived their TTL")
	}
	b.Sweep()
	if len(ended) != 2 {
		t.Fatalf("OnEnd after sweep: got %v, want both expired sessions", ended)
	}
	if _, ok := b.sessions.revoke("unknown"); ok {
		t.Fatal("revoked an unknown cookie")
	}
}
