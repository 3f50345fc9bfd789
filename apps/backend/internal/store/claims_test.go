package store

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestHeartbeatClaims: a task on a step with heartbeat_minutes and an
// on_heartbeat automation is due its interval after it arrived; of eight
// sweeps claiming it at once one wins, and it is not due again until
// another interval passed; a step without on_heartbeat automations has no
// due tasks; a move to another step and back clears the last heartbeat;
// an archived task is never due.
func TestHeartbeatClaims(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		s := newTestStore(t)
		b := newBoard(t, s, "Heartbeats")
		work, quiet := b.steps[1], b.steps[2]
		must(s.UpdateStep(ctx, work.ID, kanban.StepUpdate{HeartbeatMinutes: new(10),
			Events: map[string][]kanban.StepAction{kanban.EventHeartbeat: {{Type: kanban.AutoSetState, Config: map[string]json.RawMessage{"state": json.RawMessage(`"REVIEW"`)}}}}}))(t)
		must(s.UpdateStep(ctx, quiet.ID, kanban.StepUpdate{HeartbeatMinutes: new(1)}))(t)
		task := mustTask(t, s, b, work.ID, "beating")
		mustTask(t, s, b, quiet.ID, "quiet")
		entered := must(s.GetTask(ctx, task.ID))(t).StepEnteredAt
		if due := must(s.DueHeartbeats(ctx, entered.Add(9*time.Minute), 10))(t); len(due) != 0 {
			t.Fatalf("due before its interval: %+v", due)
		}
		now := entered.Add(11 * time.Minute)
		due := must(s.DueHeartbeats(ctx, now, 10))(t)
		if len(due) != 1 || due[0].TaskID != task.ID || due[0].LastAt != nil || due[0].Minutes != 10 {
			t.Fatalf("due = %+v", due)
		}
		if won := raceClaims(t, 8, func() (bool, error) {
			return s.ClaimHeartbeat(ctx, due[0], now)
		}); won != 1 {
			t.Fatalf("%d claims won, want 1", won)
		}
		if again := must(s.DueHeartbeats(ctx, now.Add(9*time.Minute), 10))(t); len(again) != 0 {
			t.Fatalf("due again within the interval: %+v", again)
		}
		later := must(s.DueHeartbeats(ctx, now.Add(11*time.Minute), 10))(t)
		if len(later) != 1 || later[0].LastAt == nil || !later[0].LastAt.Equal(now) {
			t.Fatalf("next due = %+v", later)
		}
		must(s.MoveTask(ctx, task.ID, b.steps[0].ID, 0))(t)
		must(s.MoveTask(ctx, task.ID, work.ID, 0))(t)
		back := must(s.GetTask(ctx, task.ID))(t).StepEnteredAt
		if d := must(s.DueHeartbeats(ctx, back.Add(11*time.Minute), 10))(t); len(d) != 1 || d[0].LastAt != nil {
			t.Fatalf("due after coming back = %+v", d)
		}
		if ok, err := s.ClaimHeartbeat(ctx, later[0], now.Add(11*time.Minute)); err != nil || ok {
			t.Fatalf("a claim read before the move won: %v, %v", ok, err)
		}
		must(s.ArchiveTask(ctx, task.ID))(t)
		if d := must(s.DueHeartbeats(ctx, back.Add(time.Hour), 10))(t); len(d) != 0 {
			t.Fatalf("archived task due: %+v", d)
		}
	})
}

// TestQuorumClaims: of eight deciders resolving one visit's quorum at
// once, one wins; the same visit is not claimed again; a new visit of the
// step (the task moved away and back) is.
func TestQuorumClaims(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		s := newTestStore(t)
		b := newBoard(t, s, "Quorum")
		review := b.steps[2]
		task := mustTask(t, s, b, review.ID, "decided")
		entered := must(s.GetTask(ctx, task.ID))(t).StepEnteredAt
		if won := raceClaims(t, 8, func() (bool, error) {
			return s.ClaimQuorum(ctx, task.ID, review.ID, entered)
		}); won != 1 {
			t.Fatalf("%d claims won, want 1", won)
		}
		if ok, err := s.ClaimQuorum(ctx, task.ID, review.ID, entered); err != nil || ok {
			t.Fatalf("the same visit claimed again: %v, %v", ok, err)
		}
		must(s.MoveTask(ctx, task.ID, b.steps[1].ID, 0))(t)
		if ok, err := s.ClaimQuorum(ctx, task.ID, review.ID, entered); err != nil || ok {
			t.Fatalf("a visit the task left claimed: %v, %v", ok, err)
		}
		must(s.MoveTask(ctx, task.ID, review.ID, 0))(t)
		again := must(s.GetTask(ctx, task.ID))(t).StepEnteredAt
		if ok, err := s.ClaimQuorum(ctx, task.ID, review.ID, again); err != nil || !ok {
			t.Fatalf("the new visit's claim: %v, %v", ok, err)
		}
		must(0, s.ReleaseQuorum(ctx, task.ID, again))(t)
		if ok, err := s.ClaimQuorum(ctx, task.ID, review.ID, again); err != nil || !ok {
			t.Fatalf("the claim after its release: %v, %v", ok, err)
		}
	})
}

// raceClaims runs claim from n goroutines at once and says how many won
// (an error fails t).
func raceClaims(t *testing.T, n int, claim func() (bool, error)) int {
	t.Helper()
	var won atomic.Int32
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			ok, err := claim()
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	return int(won.Load())
}
