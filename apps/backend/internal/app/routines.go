package app

import (
	"context"
	"errors"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/routine"
)

// defaultRoutineTick is how often the routine scheduler looks for due
// routines: an on-time run starts at most this late.
const defaultRoutineTick = 10 * time.Second

// runRoutines runs the routine scheduler until the backend stops: every
// tick, under the cluster's "routines" lock on PostgreSQL (one backend at
// a time; the claims make each run once-only whichever backend ticks).
func (b *backend) runRoutines() {
	every := b.cfg.RoutineTick
	if every <= 0 {
		every = defaultRoutineTick
	}
	now := b.cfg.Clock
	if now == nil {
		now = kanban.Now
	}
	s := &routine.Scheduler{Store: b.store, Run: b.svc.RunRoutine, Log: b.log}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Loop(b.life.ctx, every, now, b.shared.once())
	}()
	b.life.push("routines", func(ctx context.Context) error {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return errors.New("the routine scheduler did not stop in time")
		}
	})
}
