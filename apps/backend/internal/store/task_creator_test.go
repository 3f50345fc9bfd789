package store

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestTaskCreator: a task keeps the task whose session created it
// (migration 0012) in every read, and loses it, not itself, when that task
// is deleted.
func TestTaskCreator(t *testing.T) {
	t.Parallel()
	bothEngines(t, testTaskCreator)
}

func testTaskCreator(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	creator := mustTask(t, s, b, "", "creator")
	made, _, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "made", CreatedByTaskID: creator.ID})
	if err != nil || made.CreatedByTaskID != creator.ID {
		t.Fatalf("create: got %+v, %v; want created_by_task_id %s", made, err, creator.ID)
	}
	got, err := s.GetTask(ctx, made.ID)
	if err != nil || got.CreatedByTaskID != creator.ID {
		t.Fatalf("get: got %+v, %v; want the creator", got, err)
	}
	l, err := s.ListTaskDetails(ctx, kanban.TaskFilter{WorkspaceID: b.ws.ID}, kanban.Page{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range l.Items {
		if want := map[string]string{made.ID: creator.ID}[d.ID]; d.CreatedByTaskID != want {
			t.Fatalf("list: task %s has creator %q, want %q", d.Title, d.CreatedByTaskID, want)
		}
	}
	if _, _, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "orphan", CreatedByTaskID: "no-such-task"}); err == nil {
		t.Fatal("a creator that is no task: got nil error, want a refusal")
	}
	if err := s.DeleteTask(ctx, creator.ID); err != nil {
		t.Fatal(err)
	}
	if got, err = s.GetTask(ctx, made.ID); err != nil || got.CreatedByTaskID != "" {
		t.Fatalf("after the creator's deletion: got %+v, %v; want the task kept without a creator", got, err)
	}
}

// TestGitTextRules: branch names and remote URLs are checked where the
// store writes them (kanban.CheckBranch, kanban.CheckRemoteURL), and a
// repository default branch stored before the rule is not copied into a
// new link.
func TestGitTextRules(t *testing.T) {
	t.Parallel()
	bothEngines(t, testGitTextRules)
}

func testGitTextRules(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	task := mustTask(t, s, b, "", "t")
	_, err := s.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.ws.ID, RemoteURL: "ext::sh -c id"})
	wantCode(t, err, kanban.CodeValidation)
	_, err = s.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.ws.ID, RemoteURL: "https://example.com/a.git", DefaultBranch: "-b"})
	wantCode(t, err, kanban.CodeValidation)
	_, _, err = s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "x",
		Repository: &kanban.TaskRepositoryInput{RepositoryURL: "fd::3"}})
	wantCode(t, err, kanban.CodeValidation)
	repo, err := s.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.ws.ID, RemoteURL: "https://example.com/a.git"})
	if err != nil {
		t.Fatal(err)
	}
	bad := "a..b"
	_, err = s.UpdateRepository(ctx, repo.ID, &bad)
	wantCode(t, err, kanban.CodeValidation)
	for _, tr := range []kanban.TaskRepository{{BaseBranch: "--upload-pack=x"}, {BaseBranch: "main", CheckoutBranch: "x@{1}"}} {
		tr.TaskID, tr.RepositoryID = task.ID, repo.ID
		_, err = s.SetTaskRepository(ctx, tr)
		wantCode(t, err, kanban.CodeValidation)
	}
	// A default branch written before the rule existed.
	if _, err := s.stmts.ExecContext(ctx, `UPDATE repositories SET default_branch = ? WHERE id = ?`, "$(id)", repo.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: repo.ID})
	wantCode(t, err, kanban.CodeValidation)
	if n := countRows(t, s, "task_repositories"); n != 0 {
		t.Fatalf("task_repositories: got %d rows, want none written", n)
	}
}
