package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// stuckSession is the real store, except that reading one session blocks
// until the caller's context ends (a database that stopped answering).
type stuckSession struct {
	kanban.Store
	id      string
	entered chan struct{}
	ended   chan error
}

func (s *stuckSession) GetSession(ctx context.Context, id string) (*kanban.Session, error) {
	if id != s.id {
		return s.Store.GetSession(ctx, id)
	}
	close(s.entered)
	<-ctx.Done()
	s.ended <- ctx.Err()
	return nil, ctx.Err()
}

// TestRuntimeContextEndCancelsStoreCalls: a run blocked in a store call is
// cancelled when the runtime's base context ends, so Shutdown returns
// within its bound; the session is left as it was (it resumes on the next
// start), and no agent starts after.
func TestRuntimeContextEndCancelsStoreCalls(t *testing.T) {
	t.Parallel()
	st, sess := recorderFixture(t)
	stuck := &stuckSession{Store: st, id: sess.ID, entered: make(chan struct{}), ended: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	m := New(ctx, Config{Store: stuck, Publisher: nopPublisher{}, Logger: discardLog()})
	m.Start(sess)
	select {
	case <-stuck.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the run never read its session")
	}
	cancel()
	bound, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := m.Shutdown(bound); err != nil {
		t.Fatalf("Shutdown: got %v, want the runs stopped within the bound", err)
	}
	if err := <-stuck.ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the blocked store call ended with %v, want context.Canceled", err)
	}
	got, err := st.GetSession(context.Background(), sess.ID)
	if err != nil || got.State != kanban.SessionQueued {
		t.Fatalf("session after shutdown: got %v (%v), want it QUEUED as it was", got.State, err)
	}
	m.Start(sess)
	if n := m.Running(); n != 0 {
		t.Fatalf("got %d agents running after shutdown, want 0", n)
	}
}

type nopPublisher struct{}

func (nopPublisher) Publish(string, string, any) {}
