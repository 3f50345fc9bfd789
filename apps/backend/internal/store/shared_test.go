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

// TestClaimOrphansOnce: two backends claim the live managed sessions of a
// backend whose lease lapsed at the same moment; each session goes to
// exactly one of them, and the sessions of a live backend to neither.
func TestClaimOrphansOnce(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	ctx := context.Background()
	a, b := openShared(t, u), openShared(t, u)
	bd := newBoard(t, a, "Claims")
	now := time.Now()
	if err := a.Heartbeat(ctx, "dead", "", now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"alive", "claimer0", "claimer1"} { // the claimers are live backends too
		if err := a.Heartbeat(ctx, id, "", now); err != nil {
			t.Fatal(err)
		}
	}
	orphans := map[string]bool{}
	for i := range 20 {
		owner := "dead"
		if i%5 == 0 {
			owner = "alive"
		}
		sess, _, err := a.CreateSession(ctx, kanban.SessionCreate{TaskID: mustTask(t, a, bd, "", fmt.Sprint(i)).ID, Managed: true, Owner: owner})
		if err != nil {
			t.Fatal(err)
		}
		if owner == "dead" {
			orphans[sess.ID] = true
		}
	}
	since := now.Add(-time.Minute)
	seen := claimAtOnce(t, []*Store{a, b}, since)
	for id := range orphans {
		if seen[id] != 1 {
			t.Fatalf("orphan %s claimed %d times, want once", id, seen[id])
		}
	}
	if len(seen) != len(orphans) {
		t.Fatalf("got %d sessions claimed, want the %d orphans only (a live backend's sessions are its own)", len(seen), len(orphans))
	}
	if mustSessionOf(t, a, "alive") == "" {
		t.Fatal("no session left to the live backend that created it")
	}
}

// claimAtOnce has each store claim orphans (three at a time, as backend
// claimer<i>) at once until none is left, and counts the claims of each
// session.
func claimAtOnce(t *testing.T, stores []*Store, since time.Time) map[string]int {
	t.Helper()
	got := make([][]kanban.Session, len(stores))
	var wg sync.WaitGroup
	for i, st := range stores {
		wg.Go(func() {
			for {
				l, err := st.ClaimOrphans(context.Background(), fmt.Sprint("claimer", i), since, 3)
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if len(l) == 0 {
					return
				}
				got[i] = append(got[i], l...)
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, l := range got {
		for _, s := range l {
			seen[s.ID]++
		}
	}
	return seen
}

// mustSessionOf returns a session owned by backend owner.
func mustSessionOf(t *testing.T, s *Store, owner string) string {
	t.Helper()
	var id string
	if err := s.stmts.QueryRowContext(context.Background(), `SELECT id FROM task_sessions WHERE owner_id = ? LIMIT 1`, owner).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestTryLockExcludes: while one backend holds an advisory lock, another
// cannot take it; once released, it can.
func TestTryLockExcludes(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	ctx := context.Background()
	a, b := openShared(t, u), openShared(t, u)
	unlock, ok, err := a.TryLock(ctx, "sweep")
	if err != nil || !ok {
		t.Fatalf("first lock: %v, %v", ok, err)
	}
	if _, ok, err := b.TryLock(ctx, "sweep"); err != nil || ok {
		t.Fatalf("second lock while held: got %v, %v; want refused", ok, err)
	}
	if u2, ok, err := b.TryLock(ctx, "other"); err != nil || !ok {
		t.Fatalf("another name: got %v, %v; want taken", ok, err)
	} else {
		u2()
	}
	unlock()
	u3, ok, err := b.TryLock(ctx, "sweep")
	if err != nil || !ok {
		t.Fatalf("lock after release: %v, %v", ok, err)
	}
	u3()
}
