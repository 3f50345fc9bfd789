package flow

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// stuckStore is the real store, except that reading one task blocks until
// the caller's context ends (a database that stopped answering).
type stuckStore struct {
	kanban.Store
	task    string
	entered chan struct{}
	ended   chan error
}

func (s *stuckStore) GetTask(ctx context.Context, id string) (*kanban.Task, error) {
	if id != s.task {
		return s.Store.GetTask(ctx, id)
	}
	close(s.entered)
	<-ctx.Done()
	s.ended <- ctx.Err()
	return nil, ctx.Err()
}

// TestEngineContextEndCancelsAutomations: an automation blocked in a store
// call is cancelled when the engine's base context ends, so Close returns
// at once with the engine idle and the call ended by the cancellation; no
// more work is taken after.
func TestEngineContextEndCancelsAutomations(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"A","events":{"on_turn_start":[{"type":"set_state","config":{"state":"REVIEW"}}]}}]`)
	task := h.task("Blocked", steps[0])
	st := &stuckStore{Store: h.st, task: task.ID, entered: make(chan struct{}), ended: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	events := &kanban.DomainEvents{}
	eng := New(ctx, Config{Store: st, Service: h.svc, Events: events})
	events.Emit(kanban.TurnEvent{TaskID: task.ID, StepID: steps[0].ID, StartedAt: kanban.Now()})
	select {
	case <-st.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn's automations never read the task")
	}
	cancel()
	closing, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	eng.Close(closing)
	if closing.Err() != nil || eng.Busy() {
		t.Fatalf("Close: got the bound reached %v and the engine busy %v, want both false", closing.Err() != nil, eng.Busy())
	}
	if err := <-st.ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the blocked store call ended with %v, want context.Canceled", err)
	}
	events.Emit(kanban.TaskCreated{Task: task})
	if eng.Busy() {
		t.Fatal("the engine took work after its context ended")
	}
	if got := h.get(task.ID).State; got == kanban.TaskReview {
		t.Fatalf("task state %s: the cancelled automation ran", got)
	}
}
