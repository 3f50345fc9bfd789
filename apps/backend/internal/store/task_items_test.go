package store

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestListTaskItems checks the two shapes of task.list's items: a summary
// carries a preview of the prompt (cut at PreviewLen characters, flagged)
// and the counts; a detail carries the full task and the same counts.
func TestListTaskItems(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	long := strings.Repeat("é", 60) + strings.Repeat("x", 2000) // multibyte characters around the cut
	exact := strings.Repeat("ü", kanban.PreviewLen)
	create := func(in kanban.TaskCreate) *kanban.Task {
		t.Helper()
		in.WorkspaceID, in.WorkflowStepID = b.ws.ID, b.steps[0].ID
		task, _, err := s.CreateTask(ctx, in)
		if err != nil {
			t.Fatalf("create %q: %v", in.Title, err)
		}
		return task
	}
	parent := create(kanban.TaskCreate{Title: "parent", Description: long})
	create(kanban.TaskCreate{Title: "child 1", ParentID: parent.ID, Description: exact})
	create(kanban.TaskCreate{Title: "child 2", ParentID: parent.ID})
	gone := create(kanban.TaskCreate{Title: "archived child", ParentID: parent.ID})
	if _, err := s.ArchiveTask(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	done := create(kanban.TaskCreate{Title: "done blocker"})
	completed := kanban.TaskCompleted
	if _, err := s.UpdateTask(ctx, done.ID, kanban.TaskUpdate{State: &completed}); err != nil {
		t.Fatal(err)
	}
	open := create(kanban.TaskCreate{Title: "open blocker"})
	blocked := create(kanban.TaskCreate{Title: "blocked", BlockedBy: []string{done.ID, open.ID}})

	f := kanban.TaskFilter{WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[0].ID}
	sums, err := s.ListTaskSummaries(ctx, f, kanban.Page{})
	if err != nil {
		t.Fatal(err)
	}
	byTitle := map[string]kanban.TaskSummary{}
	for _, it := range sums.Items {
		byTitle[it.Title] = it
	}
	p := byTitle["parent"]
	if utf8.RuneCountInString(p.Description) != kanban.PreviewLen || !strings.HasPrefix(long, p.Description) || !p.DescriptionTruncated {
		t.Errorf("parent: got a %d-character preview (truncated %v), want the first %d characters, flagged as cut",
			utf8.RuneCountInString(p.Description), p.DescriptionTruncated, kanban.PreviewLen)
	}
	if p.Subtasks != 2 || p.OpenBlockers != 0 {
		t.Errorf("parent: got %+v, want 2 live subtasks and no open blocker", p.TaskCounts)
	}
	if c := byTitle["child 1"]; c.Description != exact || c.DescriptionTruncated || c.ParentID != parent.ID {
		t.Errorf("child 1: got %+v, want its whole %d-character prompt, not flagged, and its parent", c, kanban.PreviewLen)
	}
	if c := byTitle["blocked"]; c.OpenBlockers != 1 || c.ID != blocked.ID {
		t.Errorf("blocked: got %+v, want 1 open blocker (the other is completed)", c.TaskCounts)
	}
	if _, listed := byTitle["archived child"]; listed {
		t.Error("an archived task is listed without include_archived")
	}

	checkDetailsMatch(t, s, f, sums.Items)
}

// TestListTaskItemsPagesLikeListTasks walks every order with each listing,
// switching between them on every page: same tasks, same order, and each
// listing's cursor continues the others'.
func TestListTaskItemsPagesLikeListTasks(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	for i := range 17 {
		mustTask(t, s, b, b.steps[i%2].ID, "t")
	}
	for _, f := range []kanban.TaskFilter{{WorkspaceID: b.ws.ID}, {WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[1].ID}} {
		want := collectTasks(t, s, f, 50)
		var got []string
		cursor := ""
		for page := 0; ; page++ {
			p := kanban.Page{Limit: 4, Cursor: cursor}
			var ids []string
			var err error
			switch page % 3 {
			case 0:
				ids, cursor, err = pageIDs(s.ListTaskSummaries(ctx, f, p))(func(x kanban.TaskSummary) string { return x.ID })
			case 1:
				ids, cursor, err = pageIDs(s.ListTaskDetails(ctx, f, p))(func(x kanban.TaskDetail) string { return x.ID })
			default:
				ids, cursor, err = pageIDs(s.ListTasks(ctx, f, p))(func(x kanban.Task) string { return x.ID })
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ids...)
			if cursor == "" {
				break
			}
		}
		if len(got) != len(want) {
			t.Fatalf("filter %+v: got %d tasks, want %d", f, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i].ID {
				t.Fatalf("filter %+v: task %d is %s, want %s", f, i, got[i], want[i].ID)
			}
		}
	}
}

// TestListTaskItemsQueryPlans checks that the item listings walk the same
// indexes as ListTasks and that their counts use indexes too: no scan, no
// sort.
func TestListTaskItemsQueryPlans(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	b := newBoard(t, s, "W")
	seedStep(t, s, b, 200)
	filters := map[string]kanban.TaskFilter{
		"idx_tasks_step":              {WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[1].ID},
		"idx_tasks_workspace_created": {WorkspaceID: b.ws.ID},
	}
	for index, f := range filters {
		where, args := taskFilterWhere(f)
		for _, q := range []func() (string, []any, error){
			func() (string, []any, error) {
				return inOrder(f, summariesByPosition, summariesByCreation).query(kanban.Page{Limit: 10}, where, args...)
			},
			func() (string, []any, error) {
				return inOrder(f, detailsByPosition, detailsByCreation).query(kanban.Page{Limit: 10}, where, args...)
			},
		} {
			query, qargs, err := q()
			if err != nil {
				t.Fatal(err)
			}
			plan := explain(t, s, query, qargs)
			if !strings.Contains(plan, index) || strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN ") ||
				!strings.Contains(plan, "idx_tasks_parent") {
				t.Errorf("%s: got plan %q, want an ordered walk of %s and indexed counts", index, plan, index)
			}
		}
	}
}

// pageIDs returns a function that lists the ids of a page (by id) with the
// page's next cursor, or the listing's error.
func pageIDs[T any](l *kanban.List[T], err error) func(id func(T) string) ([]string, string, error) {
	return func(id func(T) string) ([]string, string, error) {
		if err != nil {
			return nil, "", err
		}
		out := make([]string, len(l.Items))
		for i, it := range l.Items {
			out[i] = id(it)
		}
		return out, l.NextCursor, nil
	}
}

func TestTaskListingsWorkspaceScope(t *testing.T) {
	t.Parallel()
	bothEngines(t, testTaskListingsWorkspaceScope)
}

// testTaskListingsWorkspaceScope: whether the workspace is checked before
// the page or only after an empty one, every listing answers a missing
// workspace with NOT_FOUND (even with a bad cursor), an empty workspace
// with an empty page, and a board with its tasks.
func testTaskListingsWorkspaceScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestStore(t)
	b := newBoard(t, s, "W")
	empty := newBoard(t, s, "Empty")
	mustTask(t, s, b, "", "one")
	lists := map[string]func(kanban.TaskFilter, kanban.Page) (int, error){
		"ListTasks": func(f kanban.TaskFilter, p kanban.Page) (int, error) {
			l, err := s.ListTasks(ctx, f, p)
			return lenOf(l), err
		},
		"ListTaskSummaries": func(f kanban.TaskFilter, p kanban.Page) (int, error) {
			l, err := s.ListTaskSummaries(ctx, f, p)
			return lenOf(l), err
		},
		"ListTaskDetails": func(f kanban.TaskFilter, p kanban.Page) (int, error) {
			l, err := s.ListTaskDetails(ctx, f, p)
			return lenOf(l), err
		},
	}
	for name, list := range lists {
		for _, p := range []kanban.Page{{}, {Cursor: "not-a-cursor"}} {
			_, err := list(kanban.TaskFilter{WorkspaceID: "missing"}, p)
			if kanban.ErrorCode(err) != kanban.CodeNotFound {
				t.Errorf("%s, missing workspace, cursor %q: got %v, want NOT_FOUND", name, p.Cursor, err)
			}
		}
		if n, err := list(kanban.TaskFilter{WorkspaceID: empty.ws.ID}, kanban.Page{}); err != nil || n != 0 {
			t.Errorf("%s, empty workspace: got %d tasks, %v; want an empty page", name, n, err)
		}
		if n, err := list(kanban.TaskFilter{WorkspaceID: b.ws.ID}, kanban.Page{}); err != nil || n != 1 {
			t.Errorf("%s, board: got %d tasks, %v; want 1", name, n, err)
		}
		if _, err := list(kanban.TaskFilter{WorkspaceID: b.ws.ID}, kanban.Page{Cursor: "not-a-cursor"}); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Errorf("%s, board, bad cursor: got %v, want VALIDATION_ERROR", name, err)
		}
	}
}

func lenOf[T any](l *kanban.List[T]) int {
	if l == nil {
		return -1
	}
	return len(l.Items)
}

// checkDetailsMatch checks that each detail f lists is GetTask's task with
// the counts of the summary at its place.
func checkDetailsMatch(t *testing.T, s *Store, f kanban.TaskFilter, sums []kanban.TaskSummary) {
	t.Helper()
	ctx := context.Background()
	details, err := s.ListTaskDetails(ctx, f, kanban.Page{})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range details.Items {
		full, err := s.GetTask(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(*full, d.Task); diff != "" {
			t.Errorf("detail %s differs from GetTask (-get +detail):\n%s", d.Title, diff)
		}
		if d.TaskCounts != sums[i].TaskCounts || d.ID != sums[i].ID {
			t.Errorf("detail %s: got counts %+v at %d, want the summary's %+v", d.Title, d.TaskCounts, i, sums[i].TaskCounts)
		}
	}
}
