package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestStorageFullIsUnavailable is the regression test for writes on a full
// disk answering INTERNAL_ERROR: SQLite's "database or disk is full" (here
// a real one, from a database capped by max_page_count) is UNAVAILABLE,
// with a message that says nothing was applied. The reliability suite's
// disk-full scenario checks the same on a full tmpfs end to end.
func TestStorageFullIsUnavailable(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for _, q := range []string{`CREATE TABLE t (v TEXT)`, `PRAGMA max_page_count = 8`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var full error
	for i := 0; i < 1000 && full == nil; i++ {
		_, full = db.ExecContext(ctx, `INSERT INTO t VALUES (?)`, strings.Repeat("x", 1000))
	}
	if full == nil {
		t.Fatal("got no error filling a database capped at 8 pages, want SQLITE_FULL")
	}
	got := storageError(fmt.Errorf("create task: %w", full))
	if kanban.ErrorCode(got) != kanban.CodeUnavailable || !strings.Contains(got.Error(), "not applied") {
		t.Fatalf("got %v, want UNAVAILABLE saying the write was not applied", got)
	}
	plain := errors.New("something else")
	if got := storageError(plain); got != plain {
		t.Fatalf("got %v, want other errors unchanged", got)
	}
	if got := storageError(kanban.NotFound("task")); kanban.ErrorCode(got) != kanban.CodeNotFound {
		t.Fatalf("got %v, want domain errors unchanged", got)
	}
}
