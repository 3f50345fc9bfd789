// Package routine runs routines: at each tick, every routine whose next
// run fell due is claimed (a compare-and-set on its next run, so a run is
// made once however many backends tick) and run.
package routine

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Store is what the scheduler needs of the store.
type Store interface {
	DueRoutines(ctx context.Context, now time.Time, limit int) ([]kanban.Routine, error)
	ClaimRoutineRun(ctx context.Context, r *kanban.Routine, next time.Time, run kanban.RoutineRun) (bool, error)
}

// Runner makes a claimed run (action.Service.RunRoutine).
type Runner func(ctx context.Context, r *kanban.Routine, run kanban.RoutineRun) kanban.RoutineRun

// Scheduler claims and runs the routines that fell due.
type Scheduler struct {
	Store Store
	Run   Runner
	Log   *slog.Logger

	mu sync.Mutex
	// ticked is the time of this scheduler's last completed tick (zero
	// before the first): a run that fell due after it was seen by no
	// tick yet, one due before it is a backlog of a busy tick.
	ticked time.Time
}

const (
	// batch is how many due routines one read returns.
	batch = 100
	// maxPerTick bounds the routines one tick runs; the rest wait for the
	// next tick.
	maxPerTick = 1000
)

// Tick claims and runs the routines due at now and says how many it
// claimed.
func (s *Scheduler) Tick(ctx context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	prev := s.ticked
	s.mu.Unlock()
	claimed, seen := 0, 0
	for seen < maxPerTick {
		due, err := s.Store.DueRoutines(ctx, now, batch)
		if err != nil {
			return claimed, err
		}
		for i := range due {
			ok, err := s.one(ctx, &due[i], now, prev)
			if err != nil {
				return claimed, err
			}
			if ok {
				claimed++
			}
		}
		seen += len(due)
		if len(due) < batch {
			break
		}
	}
	s.mu.Lock()
	s.ticked = now
	s.mu.Unlock()
	return claimed, nil
}

// one claims r's due run and makes it. The latest time r fell due is
// the run's; when that is more than RoutineGrace before now and no tick
// of this scheduler (prev: its last) came after it, the backends were
// down (or the machine asleep), and r's missed policy says whether it
// runs (run_once) or is recorded as missed (skip); a run a busy tick left
// for this one is made however late. Earlier due times are folded into
// the run's detail: a routine makes at most one run per tick.
func (s *Scheduler) one(ctx context.Context, r *kanban.Routine, now, prev time.Time) (bool, error) {
	sched, err := kanban.ParseRoutineSchedule(r.Schedule, r.TimeZone)
	if err != nil {
		// Stored routines were validated: a schedule that no longer
		// parses is disabled by moving it out of reach, with a run saying so.
		return s.claim(ctx, r, now.AddDate(100, 0, 0), kanban.RoutineRun{RoutineID: r.ID, ScheduledFor: r.NextRunAt,
			StartedAt: now, Outcome: kanban.RunFailed, Detail: "the stored schedule no longer parses; update the routine"}, false)
	}
	last, count, next := sched.DueRuns(r.NextRunAt, now)
	if count == 0 {
		return false, nil
	}
	run := kanban.RoutineRun{RoutineID: r.ID, ScheduledFor: last, StartedAt: now, Outcome: kanban.RunStarted}
	execute := true
	switch {
	case now.Sub(last) > kanban.RoutineGrace && (prev.IsZero() || prev.Before(last)):
		run.Detail = kanban.MissedText(count, last, r.Missed)
		if r.Missed != kanban.RoutineMissedRunOnce {
			run.Outcome, execute = kanban.RunMissed, false
		}
	case count > 1:
		run.Detail = kanban.EarlierText(count-1, r.Missed)
	}
	return s.claim(ctx, r, next, run, execute)
}

func (s *Scheduler) claim(ctx context.Context, r *kanban.Routine, next time.Time, run kanban.RoutineRun, execute bool) (bool, error) {
	ok, err := s.Store.ClaimRoutineRun(ctx, r, next, run)
	if err != nil || !ok {
		return false, err
	}
	if execute {
		run = s.Run(ctx, r, run)
		if run.Outcome == kanban.RunFailed && s.Log != nil {
			s.Log.Warn("routine: run failed", "routine", r.ID, "detail", run.Detail)
		}
	}
	return true, nil
}

// Loop ticks every every, at the times now tells, until ctx ends; once,
// when set, guards each tick so that one backend at a time runs it (the
// claims are once-only without it: it saves the others the reads).
func (s *Scheduler) Loop(ctx context.Context, every time.Duration, now func() time.Time, once func(ctx context.Context, name string, fn func())) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		tick := func() {
			if _, err := s.Tick(ctx, now()); err != nil && ctx.Err() == nil && s.Log != nil {
				s.Log.Warn("routine: tick", "err", err)
			}
		}
		if once != nil {
			once(ctx, "routines", tick)
		} else {
			tick()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
