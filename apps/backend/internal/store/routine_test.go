package store

import (
	"context"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestRoutineClaims: of eight schedulers claiming one due run at once,
// one wins; a routine keeps its last MaxRoutineRuns runs; a disabled or
// deleted routine's run is claimed by nobody, and its runs go with it.
func TestRoutineClaims(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		s := newTestStore(t)
		b := newBoard(t, s, "Routines")
		due := kanban.Now().Truncate(time.Minute)
		r := must(s.CreateRoutine(ctx, kanban.Routine{WorkspaceID: b.ws.ID, Name: "R", Schedule: "* * * * *", TimeZone: "UTC",
			Target: kanban.RoutineCreateTask, Title: "T", Missed: kanban.RoutineMissedSkip, Enabled: true, NextRunAt: due}))(t)
		if won := raceClaims(t, 8, func() (bool, error) {
			read := *r
			return s.ClaimRoutineRun(ctx, &read, due.Add(time.Minute), kanban.RoutineRun{RoutineID: r.ID, ScheduledFor: due,
				StartedAt: kanban.Now(), Outcome: kanban.RunStarted})
		}); won != 1 {
			t.Fatalf("%d claims won, want 1", won)
		}
		cur := must(s.GetRoutine(ctx, r.ID))(t)
		for i := 1; i <= kanban.MaxRoutineRuns+9; i++ {
			at := due.Add(time.Duration(i) * time.Minute)
			if !cur.NextRunAt.Equal(at) {
				t.Fatalf("next run %v, want %v", cur.NextRunAt, at)
			}
			if ok, err := s.ClaimRoutineRun(ctx, cur, at.Add(time.Minute), kanban.RoutineRun{RoutineID: r.ID, ScheduledFor: at,
				StartedAt: kanban.Now(), Outcome: kanban.RunSkipped}); err != nil || !ok {
				t.Fatalf("claim %d: %v, %v", i, ok, err)
			}
			cur = must(s.GetRoutine(ctx, r.ID))(t)
		}
		runs := must(s.ListRoutineRuns(ctx, r.ID, kanban.Page{Limit: 1}))(t)
		var n int
		must(0, s.stmts.QueryRowContext(ctx, `SELECT COUNT(*) FROM routine_runs WHERE routine_id = ?`, r.ID).Scan(&n))(t)
		if n != kanban.MaxRoutineRuns || !runs.Items[0].ScheduledFor.Equal(due.Add(time.Duration(kanban.MaxRoutineRuns+9)*time.Minute)) {
			t.Fatalf("%d runs kept, newest %v", n, runs.Items[0].ScheduledFor)
		}
		cur.Enabled = false
		must(s.ReplaceRoutine(ctx, *cur, false))(t)
		if ok, err := s.ClaimRoutineRun(ctx, cur, cur.NextRunAt.Add(time.Minute), kanban.RoutineRun{RoutineID: r.ID,
			ScheduledFor: cur.NextRunAt, StartedAt: kanban.Now(), Outcome: kanban.RunStarted}); err != nil || ok {
			t.Fatalf("a disabled routine's run claimed: %v, %v", ok, err)
		}
		if due, err := s.DueRoutines(ctx, cur.NextRunAt.Add(time.Hour), 10); err != nil || len(due) != 0 {
			t.Fatalf("due while disabled: %v, %v", due, err)
		}
		must(0, s.DeleteRoutine(ctx, r.ID))(t)
		must(0, s.stmts.QueryRowContext(ctx, `SELECT COUNT(*) FROM routine_runs WHERE routine_id = ?`, r.ID).Scan(&n))(t)
		if n != 0 {
			t.Fatalf("%d runs left after the routine was deleted", n)
		}
	})
}
