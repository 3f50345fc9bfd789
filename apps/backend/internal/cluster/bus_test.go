package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/pgtest"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// recorder is a local publisher that keeps what it was given.
type recorder struct {
	mu  sync.Mutex
	got []string // "topic event payload"
}

func (r *recorder) Publish(topic, event string, payload any) {
	b, _ := json.Marshal(payload)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, topic+" "+event+" "+string(b))
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// node is one backend's bus on a shared database.
type node struct {
	st  *store.Store
	bus *Bus
	rec *recorder
}

func startNode(t *testing.T, u, id string) *node {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{st: st, rec: &recorder{}}
	n.bus = NewBus(st, n.rec, id, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	go n.bus.Run(ctx)
	t.Cleanup(func() {
		cancel()
		<-n.bus.Done()
		_ = st.Close()
	})
	select {
	case <-n.bus.Listening():
	case <-time.After(10 * time.Second):
		t.Fatal("the bus did not listen within 10s")
	}
	return n
}

// waitLen waits until r holds n entries.
func waitLen(t *testing.T, r *recorder, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(r.list()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d events, want %d", len(r.list()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // and no more arrive
	return r.list()
}

// TestBusRelaysEventsInOrder: events published on A reach A's subscribers
// at once and B's through the log, each once and in order; a payload far
// over NOTIFY's 8000-byte limit travels too; signals reach B's handlers
// only.
func TestBusRelaysEventsInOrder(t *testing.T) {
	t.Parallel()
	u := pgtest.Database(t)
	a, b := startNode(t, u, "a"), startNode(t, u, "b")
	var signals []string
	var mu sync.Mutex
	b.bus.Handle("agents.deliver", func(p json.RawMessage) {
		mu.Lock()
		defer mu.Unlock()
		signals = append(signals, string(p))
	})
	var want []string
	for i := range 300 {
		a.bus.Publish("workspace:w", "task.created", map[string]any{"id": fmt.Sprint(i)})
		want = append(want, fmt.Sprintf(`workspace:w task.created {"id":"%d"}`, i))
	}
	big := make([]byte, 100_000)
	for i := range big {
		big[i] = 'x'
	}
	a.bus.Publish("session:s", "session.message", map[string]any{"content": string(big)})
	want = append(want, `session:s session.message {"content":"`+string(big)+`"}`)
	a.bus.Signal("agents.deliver", map[string]any{"session_id": "s1"})
	got := waitLen(t, b.rec, len(want))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d on B: got %.80q, want %.80q", i, got[i], want[i])
		}
	}
	if n := len(a.rec.list()); n != len(want) {
		t.Fatalf("got %d events on A, want its own %d once", n, len(want))
	}
	// The signal was sent after the events, but nothing orders it with
	// them on B: wait (bounded) for it, then check it came once.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(signals)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // room for a duplicate to show
	mu.Lock()
	defer mu.Unlock()
	if len(signals) != 1 || signals[0] != `{"session_id":"s1"}` {
		t.Fatalf("signals on B: got %v, want the one delivery", signals)
	}
}

// TestBusListensAgainAfterConnectionLoss: when B's listening connection is
// cut, the events published meanwhile reach B once it listens again (from
// the log), each once.
func TestBusListensAgainAfterConnectionLoss(t *testing.T) {
	t.Parallel()
	u := pgtest.Database(t)
	a, b := startNode(t, u, "a"), startNode(t, u, "b")
	a.bus.Publish("workspace:w", "before", 1)
	waitLen(t, b.rec, 1)
	var cut int
	if err := a.st.DB().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) AS ok
		FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%') x WHERE ok`).Scan(&cut); err != nil || cut != 2 {
		t.Fatalf("got %d listening connections cut (%v), want both buses'", cut, err)
	}
	for i := range 20 {
		a.bus.Publish("workspace:w", "during", i)
	}
	got := waitLen(t, b.rec, 21)
	if len(got) != 21 || got[20] != "workspace:w during 19" {
		t.Fatalf("got %d events on B (last %q), want 21 ending with the 20th published during the gap", len(got), got[len(got)-1])
	}
}
