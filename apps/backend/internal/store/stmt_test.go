package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func cachedCount(s *Store) int {
	s.stmts.mu.RLock()
	defer s.stmts.mu.RUnlock()
	return len(s.stmts.stmts)
}

func TestStmtCachePreparesEachTextOnce(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := context.Background()
	const q = `SELECT COUNT(*) FROM workspaces WHERE name <> ?`
	before := cachedCount(s)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				var n int
				if err := s.stmts.QueryRowContext(ctx, q, "x").Scan(&n); err != nil {
					t.Errorf("query: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := cachedCount(s); got != before+1 {
		t.Fatalf("got %d cached statements, want %d", got, before+1)
	}
	first := s.stmts.stmt(ctx, q)
	if again := s.stmts.stmt(ctx, q); first == nil || again != first {
		t.Fatalf("got statements %p and %p, want one cached statement", first, again)
	}
}

// A text that cannot be prepared runs unprepared: the caller gets the
// database's own error, and nothing is cached.
func TestStmtCacheUnpreparableTextFailsAsUnprepared(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := context.Background()
	const bad = `SELECT nope FROM no_such_table`
	before := cachedCount(s)
	var n int
	got := s.stmts.QueryRowContext(ctx, bad).Scan(&n)
	want := s.db.QueryRowContext(ctx, bad).Scan(&n)
	if got == nil || want == nil || got.Error() != want.Error() {
		t.Fatalf("got error %v, want %v", got, want)
	}
	err := s.tx(ctx, func(tx txn) error {
		_, err := tx.ExecContext(ctx, `UPDATE no_such_table SET x = 1`)
		return err
	})
	if err == nil {
		t.Fatal("got nil error from a statement on a missing table, want the database's error")
	}
	if after := cachedCount(s); after != before {
		t.Fatalf("got %d cached statements, want %d (failed texts are not cached)", after, before)
	}
}

// Past maxCachedStmts texts run unprepared and still answer.
func TestStmtCacheBounded(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := context.Background()
	for i := 0; cachedCount(s) < maxCachedStmts; i++ {
		if _, err := s.stmts.ExecContext(ctx, fmt.Sprintf(`SELECT %d`, i)); err != nil {
			t.Fatalf("exec %d: %v", i, err)
		}
	}
	var n int
	if err := s.stmts.QueryRowContext(ctx, `SELECT 7 + ?`, 1).Scan(&n); err != nil || n != 8 {
		t.Fatalf("got %d, %v from a query past the bound, want 8, nil", n, err)
	}
	err := s.tx(ctx, func(tx txn) error {
		return tx.QueryRowContext(ctx, `SELECT 40 + ?`, 2).Scan(&n)
	})
	if err != nil || n != 42 {
		t.Fatalf("got %d, %v from a transaction's query past the bound, want 42, nil", n, err)
	}
	if got := cachedCount(s); got != maxCachedStmts {
		t.Fatalf("got %d cached statements, want the bound %d", got, maxCachedStmts)
	}
}

// Statements prepared on the pool serve transactions, whose writes still
// commit or roll back as a unit.
func TestStmtCacheInTransactions(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := context.Background()
	b := newBoard(t, s, "W")
	const rename = `UPDATE workspaces SET name = ? WHERE id = ?`
	if _, err := s.stmts.ExecContext(ctx, rename, "Pool", b.ws.ID); err != nil {
		t.Fatalf("exec on the pool: %v", err)
	}
	errBoom := errors.New("boom")
	err := s.tx(ctx, func(tx txn) error {
		if _, err := tx.ExecContext(ctx, rename, "Rolled back", b.ws.ID); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want the callback's error", err)
	}
	if err := s.tx(ctx, func(tx txn) error {
		_, err := tx.ExecContext(ctx, rename, "Committed", b.ws.ID)
		return err
	}); err != nil {
		t.Fatalf("tx: %v", err)
	}
	ws, err := s.GetWorkspace(ctx, b.ws.ID)
	if err != nil || ws.Name != "Committed" {
		t.Fatalf("got %v, %v, want the committed name", ws, err)
	}
}

func TestStmtCacheClosed(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	ctx := context.Background()
	if _, err := s.ListWorkspaces(ctx, kanban.Page{Limit: 5}); err != nil {
		t.Fatalf("list: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if got := cachedCount(s); got != 0 {
		t.Fatalf("got %d cached statements after Close, want 0", got)
	}
	if _, err := s.ListWorkspaces(ctx, kanban.Page{Limit: 5}); err == nil {
		t.Fatal("got nil error listing on a closed store, want an error")
	}
}
