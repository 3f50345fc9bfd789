package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Commits reach the database file without a checkpoint in any commit (the
// DSN turns SQLite's automatic one off) and before the store closes.
func TestCommitsAreCheckpointedInTheBackground(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	var auto int
	if err := s.db.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("got wal_autocheckpoint %d, %v; want 0 (off)", auto, err)
	}
	file := filepath.Join(dir, "kandev.db")
	size := func() int64 {
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatalf("stat: %v", err)
		}
		return fi.Size()
	}
	b := newBoard(t, s, "W")
	before := size()
	// About 1 MB of new pages, far more than the file holds now.
	for range 10 {
		if _, _, err := s.CreateTask(context.Background(), kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "T",
			Description: strings.Repeat("d", kanban.MaxPromptLen)}); err != nil {
			t.Fatalf("create task: %v", err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for size() < before+500_000 {
		if time.Now().After(deadline) {
			t.Fatalf("got database file of %d bytes 10 s after the commits, want them checkpointed into it (was %d)", size(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCloseTwice(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if _, err := s.CreateWorkspace(context.Background(), "W", ""); err != nil {
		t.Fatalf("create workspace: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: got %v, want nil", err)
	}
	if _, err := s.ListWorkspaces(context.Background(), kanban.Page{}); err == nil {
		t.Fatal("got nil error from a closed store, want an error")
	}
}
