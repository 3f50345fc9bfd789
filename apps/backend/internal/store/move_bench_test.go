package store

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// BenchmarkMoveTask60k moves a random task of a step holding 60,000 tasks
// to a random explicit position on it, and reports the median move.
func BenchmarkMoveTask60k(b *testing.B) {
	for _, e := range engines {
		b.Run(string(e), func(b *testing.B) {
			s := newTestStore(b)
			bd := newBoard(b, s, "Bench")
			const n = 60_000
			seedStep(b, s, bd, n)
			ctx := context.Background()
			if e == Postgres { // as autovacuum does after a bulk insert
				if _, err := s.db.ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
					b.Fatalf("analyze: %v", err)
				}
			}
			scan := func(r rowSource) (*string, error) {
				var id string
				return &id, r.Scan(&id)
			}
			ids, err := scanAll(ctx, s.stmts, scan, `SELECT id FROM tasks WHERE workflow_step_id = ? ORDER BY id`, bd.steps[1].ID)
			if err != nil || len(ids) != n {
				b.Fatalf("ids: got %d, %v; want %d", len(ids), err, n)
			}
			rng := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // a reproducible benchmark needs no cryptographic randomness
			var took []time.Duration
			for b.Loop() {
				id, pos := ids[rng.IntN(n)], rng.IntN(n)
				start := time.Now()
				if _, err := s.MoveTask(ctx, id, bd.steps[1].ID, pos); err != nil {
					b.Fatalf("move: %v", err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

// BenchmarkListTaskSummariesWorkflow100k lists the first list_tasks page
// (5 summaries, creation order, each with its position) of a workflow
// whose one step holds 100,000 tasks.
func BenchmarkListTaskSummariesWorkflow100k(b *testing.B) {
	s := newTestStore(b)
	bd := newBoard(b, s, "Bench")
	seedStep(b, s, bd, 100_000)
	ctx := context.Background()
	f := kanban.TaskFilter{WorkspaceID: bd.ws.ID, WorkflowID: bd.wf.ID}
	for b.Loop() {
		l, err := s.ListTaskSummaries(ctx, f, kanban.Page{Limit: 5})
		if err != nil || len(l.Items) != 5 {
			b.Fatalf("got %v, %d items; want a full page", err, len(l.Items))
		}
	}
}

// BenchmarkListTaskSummariesWorkflowDeep100k lists a page of 50 summaries
// 99,000 tasks deep in creation order, where each task's rank is far down
// its step.
func BenchmarkListTaskSummariesWorkflowDeep100k(b *testing.B) {
	s := newTestStore(b)
	bd := newBoard(b, s, "Bench")
	seedStep(b, s, bd, 100_000)
	ctx := context.Background()
	f := kanban.TaskFilter{WorkspaceID: bd.ws.ID, WorkflowID: bd.wf.ID}
	var created, id string
	if err := s.db.QueryRow(`SELECT created_at, id FROM tasks ORDER BY created_at, id LIMIT 1 OFFSET 99000`).Scan(&created, &id); err != nil {
		b.Fatalf("cursor: %v", err)
	}
	p := kanban.Page{Limit: 50, Cursor: encodeCursor(tasksByCreation.what, created, id)}
	for b.Loop() {
		l, err := s.ListTaskSummaries(ctx, f, p)
		if err != nil || len(l.Items) != 50 {
			b.Fatalf("got %v, %d items; want a full page", err, len(l.Items))
		}
	}
}
