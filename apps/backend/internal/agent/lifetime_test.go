package agent

import (
	"context"
	"errors"
	"strings"
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

// brokenExecutors is the real store, except that executors cannot be read
// (a database error).
type brokenExecutors struct{ kanban.Store }

var errExecutorRead = errors.New("disk I/O error")

func (brokenExecutors) GetExecutor(context.Context, string) (*kanban.Executor, error) {
	return nil, errExecutorRead
}

// TestExecutorLookupFailureFailsTheStart: when a session's executor cannot
// be read, its start fails and says so; the agent never runs on another
// executor (the local one) than its profile names.
func TestExecutorLookupFailureFailsTheStart(t *testing.T) {
	t.Parallel()
	st, sess := recorderFixture(t)
	if sess.ExecutorProfileID == "" || sess.AgentProfileID == "" {
		t.Fatalf("fixture session without default profiles: %+v", sess)
	}
	m := New(t.Context(), Config{Store: brokenExecutors{st}, Publisher: nopPublisher{}, Logger: discardLog()})
	m.Start(sess)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := st.GetSession(context.Background(), sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == kanban.SessionFailed {
			if want := "the executor profile's executor could not be read"; !strings.HasPrefix(got.Error, want) || got.Workdir != "" {
				t.Fatalf("got error %q and workdir %q, want %q and no working directory", got.Error, got.Workdir, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s after 10s, want FAILED", got.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
