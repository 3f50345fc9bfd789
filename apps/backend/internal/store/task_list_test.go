package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// collectTasks walks every page of f with limit and fails on duplicates.
func collectTasks(t *testing.T, s *Store, f kanban.TaskFilter, limit int) []kanban.Task {
	t.Helper()
	var out []kanban.Task
	seen := map[string]bool{}
	cursor := ""
	for range 1000 {
		l, err := s.ListTasks(context.Background(), f, kanban.Page{Limit: limit, Cursor: cursor})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(l.Items) > limit {
			t.Fatalf("got %d items, want at most %d", len(l.Items), limit)
		}
		for _, task := range l.Items {
			if seen[task.ID] {
				t.Fatalf("got task %s twice, want each once", task.ID)
			}
			seen[task.ID] = true
		}
		out = append(out, l.Items...)
		if cursor = l.NextCursor; cursor == "" {
			return out
		}
	}
	t.Fatal("got more than 1000 pages, want the walk to end")
	return nil
}

func TestListTasksFiltersAndPages(t *testing.T) {
	t.Parallel()
	bothEngines(t, testListTasksFiltersAndPages)
}

// checkListOrder checks that tasks are in list order: by position on a
// step (byPosition), else by creation then ID.
func checkListOrder(t *testing.T, name string, tasks []kanban.Task, byPosition bool) {
	t.Helper()
	for i := 1; i < len(tasks); i++ {
		prev, cur := tasks[i-1], tasks[i]
		inOrder := cur.CreatedAt.After(prev.CreatedAt) || (cur.CreatedAt.Equal(prev.CreatedAt) && cur.ID > prev.ID)
		if byPosition {
			inOrder = cur.Position > prev.Position
		}
		if !inOrder {
			t.Errorf("%s: got %s before %s, want list order", name, prev.Title, cur.Title)
		}
	}
}

func testListTasksFiltersAndPages(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	other := newBoard(t, s, "Other")
	mustTask(t, s, other, "", "foreign")
	parent := mustTask(t, s, b, b.steps[1].ID, "parent")
	for i := range 23 {
		in := kanban.TaskCreate{WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[i%2].ID, Title: fmt.Sprintf("t%d", i)}
		if i%3 == 0 {
			in.ParentID, in.State = parent.ID, kanban.TaskBlocked
		}
		if _, _, err := s.CreateTask(ctx, in); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	archived := mustTask(t, s, b, b.steps[1].ID, "archived")
	if _, err := s.ArchiveTask(ctx, archived.ID); err != nil {
		t.Fatalf("archive: %v", err)
	}
	ws, step1 := b.ws.ID, b.steps[1].ID
	cases := []struct {
		name string
		f    kanban.TaskFilter
		want int
	}{
		{"workspace", kanban.TaskFilter{WorkspaceID: ws}, 24},
		{"workspace incl. archived", kanban.TaskFilter{WorkspaceID: ws, IncludeArchived: true}, 25},
		{"workflow", kanban.TaskFilter{WorkspaceID: ws, WorkflowID: b.wf.ID}, 24},
		{"step", kanban.TaskFilter{WorkspaceID: ws, WorkflowStepID: step1}, 12},
		{"step incl. archived", kanban.TaskFilter{WorkspaceID: ws, WorkflowStepID: step1, IncludeArchived: true}, 13},
		{"parent", kanban.TaskFilter{WorkspaceID: ws, ParentID: parent.ID}, 8},
		{"parent on step", kanban.TaskFilter{WorkspaceID: ws, ParentID: parent.ID, WorkflowStepID: step1}, 4},
		{"state", kanban.TaskFilter{WorkspaceID: ws, State: kanban.TaskBlocked}, 8},
		{"state on workflow", kanban.TaskFilter{WorkspaceID: ws, WorkflowID: b.wf.ID, State: kanban.TaskTodo}, 16},
	}
	for _, c := range cases {
		got := collectTasks(t, s, c.f, 5)
		if len(got) != c.want {
			t.Errorf("%s: got %d tasks, want %d", c.name, len(got), c.want)
		}
		checkListOrder(t, c.name, got, c.f.WorkflowStepID != "")
	}
	bad := []kanban.TaskFilter{
		{WorkspaceID: ws, WorkflowStepID: other.steps[0].ID},
		{WorkspaceID: ws, WorkflowID: other.wf.ID},
	}
	for i, f := range bad {
		_, err := s.ListTasks(ctx, f, kanban.Page{})
		if kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Errorf("filter %d: got %v, want VALIDATION_ERROR", i, err)
		}
	}
	_, err := s.ListTasks(ctx, kanban.TaskFilter{WorkspaceID: "missing"}, kanban.Page{})
	wantCode(t, err, kanban.CodeNotFound)
}
