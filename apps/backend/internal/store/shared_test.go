package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
)

// TestSharedDatabaseConcurrentWriters runs two stores on one PostgreSQL
// database, as two backends do, each with several writers creating and
// moving tasks on the same steps at once. Positions stay a permutation of
// 0..n-1 on every step, and a step's wip_limit is never exceeded, not even
// for a moment (a reader checks committed counts throughout).
func TestSharedDatabaseConcurrentWriters(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	ctx := context.Background()
	a, b := openShared(t, u), openShared(t, u)
	bd := newBoard(t, a, "Shared")
	const wip = 3
	if _, err := a.UpdateStep(ctx, bd.steps[1].ID, kanban.StepUpdate{WIPLimit: new(wip)}); err != nil {
		t.Fatalf("set wip limit: %v", err)
	}
	const writers, each = 3, 40
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ids     []string
		refused atomic.Int32
	)
	stop := make(chan struct{})
	watched := watchWIP(t, a, bd.steps[1].ID, wip, stop)
	for w := range 2 * writers {
		st := []*Store{a, b}[w%2]
		wg.Go(func() {
			for i := range each {
				tk, _, err := st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: bd.ws.ID, Title: fmt.Sprintf("w%d-%d", w, i)})
				if err != nil {
					t.Errorf("writer %d create %d: %v", w, i, err)
					return
				}
				mu.Lock()
				ids = append(ids, tk.ID)
				pick := ids[rand.IntN(len(ids))]
				mu.Unlock()
				step := bd.steps[rand.IntN(3)].ID
				if _, err := st.MoveTask(ctx, pick, step, rand.IntN(8)-1); kanban.ErrorCode(err) == kanban.CodeConflict {
					refused.Add(1) // the wip limit held
				} else if err != nil {
					t.Errorf("writer %d move %d: %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-watched
	if n := countRows(t, a, "tasks"); n != 2*writers*each {
		t.Fatalf("got %d tasks, want %d", n, 2*writers*each)
	}
	for _, st := range bd.steps {
		checkDense(t, a, st.ID)
	}
	if n := len(stepPositions(t, a, bd.steps[1].ID)); n > wip {
		t.Fatalf("got %d tasks on the step with wip_limit %d", n, wip)
	}
	t.Logf("%d moves refused by the wip limit; transactions run again: %d + %d", refused.Load(), a.TxRetries(), b.TxRetries())
}

// openShared opens one more store on the database at u.
func openShared(t *testing.T, u string) *Store {
	t.Helper()
	s, err := OpenPostgres(context.Background(), u)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// watchWIP counts the live tasks on step until stop closes, failing t if
// a committed state ever holds more than limit; the channel it returns
// closes when it has stopped.
func watchWIP(t *testing.T, s *Store, step string, limit int, stop chan struct{}) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			var n int
			if err := s.stmts.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM tasks WHERE workflow_step_id = ?
				AND archived_at IS NULL`, step).Scan(&n); err != nil {
				t.Errorf("count: %v", err)
				return
			}
			if n > limit {
				t.Errorf("got %d live tasks on a step with wip_limit %d", n, limit)
				return
			}
		}
	}()
	return done
}
