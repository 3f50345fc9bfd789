package store

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestWorktreesPerRepository: a task has one worktree per repository;
// saving one again replaces it, deleting one keeps the other, and the
// task's deletion takes them all.
func TestWorktreesPerRepository(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		s := newTestStore(t)
		b := newBoard(t, s, "ws")
		task := mustTask(t, s, b, "", "multi")
		a := must(s.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.ws.ID, Name: "a", LocalPath: "/src/a"}))(t)
		r2 := must(s.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.ws.ID, Name: "b", RemoteURL: "https://example.com/o/b.git"}))(t)
		for _, w := range []kanban.Worktree{
			{TaskID: task.ID, RepositoryID: a.ID, Path: "/wt/x/a", Branch: "kandev/x"},
			{TaskID: task.ID, RepositoryID: r2.ID, Path: "/wt/x/b", Branch: "kandev/x"},
			{TaskID: task.ID, RepositoryID: a.ID, Path: "/wt/x/a-2", Branch: "kandev/x"},
		} {
			if err := s.SaveWorktree(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		wts := must(s.ListWorktrees(ctx, task.ID))(t)
		if len(wts) != 2 {
			t.Fatalf("got %d worktrees, want 2", len(wts))
		}
		if got := must(s.GetWorktree(ctx, task.ID, a.ID))(t); got.Path != "/wt/x/a-2" {
			t.Fatalf("got path %q, want the replacement /wt/x/a-2", got.Path)
		}
		if err := s.DeleteWorktree(ctx, task.ID, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetWorktree(ctx, task.ID, a.ID); kanban.ErrorCode(err) != kanban.CodeNotFound {
			t.Fatalf("got %v, want NOT_FOUND", err)
		}
		if got := must(s.GetWorktree(ctx, task.ID, r2.ID))(t); got.Path != "/wt/x/b" {
			t.Fatalf("got path %q, want /wt/x/b", got.Path)
		}
		if err := s.DeleteTask(ctx, task.ID); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, s, "task_worktrees"); n != 0 {
			t.Fatalf("got %d worktree rows after the task's deletion, want 0", n)
		}
	})
}
