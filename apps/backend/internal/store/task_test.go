package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestCreateTaskDefaults(t *testing.T) {
	t.Parallel()
	bothEngines(t, testCreateTaskDefaults)
}

func testCreateTaskDefaults(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	for i := range 3 {
		task, dedup, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: fmt.Sprintf("t%d", i)})
		if err != nil || dedup {
			t.Fatalf("got %v, dedup %v; want success, not deduplicated", err, dedup)
		}
		if task.WorkflowID != b.wf.ID || task.WorkflowStepID != b.steps[0].ID || task.State != kanban.TaskTodo || task.Position != i {
			t.Fatalf("got workflow %s step %s state %s position %d, want %s %s TODO %d",
				task.WorkflowID, task.WorkflowStepID, task.State, task.Position, b.wf.ID, b.steps[0].ID, i)
		}
		got, err := s.GetTask(ctx, task.ID)
		if err != nil || got.Title != task.Title || !got.CreatedAt.Equal(task.CreatedAt) || got.ArchivedAt != nil {
			t.Fatalf("got %+v, %v; want %+v", got, err, task)
		}
	}
	task, _, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[2].ID,
		Title: "review me", State: kanban.TaskReview, StartWhenUnblocked: true})
	if err != nil || task.WorkflowID != b.wf.ID || task.Position != 0 || !task.StartWhenUnblocked || task.State != kanban.TaskReview {
		t.Fatalf("got %+v, %v; want a REVIEW task at position 0 of step Review", task, err)
	}
	_, err = s.GetTask(ctx, "missing")
	wantCode(t, err, kanban.CodeNotFound)
}

func TestCreateTaskRejects(t *testing.T) {
	t.Parallel()
	bothEngines(t, testCreateTaskRejects)
}

func testCreateTaskRejects(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	other := newBoard(t, s, "Other")
	wf2, _ := s.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: b.ws.ID, Name: "No steps"})
	bare, _ := s.CreateWorkspace(ctx, "Bare", "")
	otherTask := mustTask(t, s, other, "", "foreign")
	mine := mustTask(t, s, b, "", "mine")
	ok := kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "ok"}
	cases := []struct {
		name   string
		mutate func(in *kanban.TaskCreate)
		code   kanban.Code
	}{
		{"unknown workspace", func(in *kanban.TaskCreate) { in.WorkspaceID = "nope" }, kanban.CodeNotFound},
		{"two-line title", func(in *kanban.TaskCreate) { in.Title = "a\nb" }, kanban.CodeValidation},
		{"inherit_parent without a parent", func(in *kanban.TaskCreate) { in.WorkspaceMode = kanban.WorkspaceInheritParent }, kanban.CodeValidation},
		{"unknown step", func(in *kanban.TaskCreate) { in.WorkflowStepID = "nope" }, kanban.CodeNotFound},
		{"unknown workflow", func(in *kanban.TaskCreate) { in.WorkflowID = "nope" }, kanban.CodeNotFound},
		{"step of other workflow", func(in *kanban.TaskCreate) { in.WorkflowID, in.WorkflowStepID = wf2.ID, b.steps[0].ID }, kanban.CodeValidation},
		{"step of other workspace", func(in *kanban.TaskCreate) { in.WorkflowStepID = other.steps[0].ID }, kanban.CodeValidation},
		{"workflow of other workspace", func(in *kanban.TaskCreate) { in.WorkflowID = other.wf.ID }, kanban.CodeValidation},
		{"workflow without steps", func(in *kanban.TaskCreate) { in.WorkflowID = wf2.ID }, kanban.CodeNotFound},
		{"workspace without workflow", func(in *kanban.TaskCreate) { in.WorkspaceID = bare.ID }, kanban.CodeNotFound},
		{"unknown parent", func(in *kanban.TaskCreate) { in.ParentID = "nope" }, kanban.CodeNotFound},
		{"parent in other workspace", func(in *kanban.TaskCreate) { in.ParentID = otherTask.ID }, kanban.CodeValidation},
		{"unknown blocker", func(in *kanban.TaskCreate) { in.BlockedBy = []string{mine.ID, "nope"} }, kanban.CodeNotFound},
		{"duplicate blocker", func(in *kanban.TaskCreate) { in.BlockedBy = []string{mine.ID, mine.ID} }, kanban.CodeValidation},
		{"blocker in other workspace", func(in *kanban.TaskCreate) { in.BlockedBy = []string{mine.ID, otherTask.ID} }, kanban.CodeValidation},
	}
	before := snapshot(t, s)
	for _, c := range cases {
		in := ok
		c.mutate(&in)
		_, _, err := s.CreateTask(ctx, in)
		if got := kanban.ErrorCode(err); got != c.code {
			t.Errorf("%s: got %v (%s), want %s", c.name, err, got, c.code)
		}
	}
	checkSnapshot(t, s, before)
	if _, _, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: strings.Repeat("ü", kanban.MaxTitleLen)}); err != nil {
		t.Fatalf("got %v for a 60-rune title, want success", err)
	}
}

func TestCreateTaskWithParentAndBlockers(t *testing.T) {
	t.Parallel()
	bothEngines(t, testCreateTaskWithParentAndBlockers)
}

func testCreateTaskWithParentAndBlockers(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	p, q := mustTask(t, s, b, "", "p"), mustTask(t, s, b, "", "q")
	c, _, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "c", ParentID: p.ID, BlockedBy: []string{p.ID, q.ID}})
	if err != nil || c.ParentID != p.ID {
		t.Fatalf("got %+v, %v; want a child of p", c, err)
	}
	l, err := s.ListBlockers(ctx, c.ID, kanban.Page{})
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("got %v, %d blockers; want 2", err, len(l.Items))
	}
}

func TestCreateTaskExternalIDDedupe(t *testing.T) {
	t.Parallel()
	bothEngines(t, testCreateTaskExternalIDDedupe)
}

func testCreateTaskExternalIDDedupe(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	other := newBoard(t, s, "Other")
	first, dedup, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "gh-1", ExternalID: "github#1"})
	if err != nil || dedup {
		t.Fatalf("got %v, dedup %v; want a new task", err, dedup)
	}
	before := snapshot(t, s)
	again, dedup, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "other title", ExternalID: "github#1",
		BlockedBy: []string{first.ID}})
	if err != nil || !dedup || again.ID != first.ID || again.Title != "gh-1" {
		t.Fatalf("got %+v, dedup %v, %v; want task %s deduplicated", again, dedup, err, first.ID)
	}
	checkSnapshot(t, s, before)
	elsewhere, dedup, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: other.ws.ID, Title: "gh-1", ExternalID: "github#1"})
	if err != nil || dedup || elsewhere.ID == first.ID {
		t.Fatalf("got %v, dedup %v; want a new task in the other workspace", err, dedup)
	}
}

func TestCreateTaskExternalIDConcurrent(t *testing.T) {
	t.Parallel()
	bothEngines(t, testCreateTaskExternalIDConcurrent)
}

func testCreateTaskExternalIDConcurrent(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	const n = 8
	ids := make([]string, n)
	fresh := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			task, dedup, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "same", ExternalID: "ext-1"})
			if err != nil {
				t.Errorf("create %d: %v", i, err)
				return
			}
			ids[i], fresh[i] = task.ID, !dedup
		})
	}
	wg.Wait()
	created := 0
	for i := range n {
		if ids[i] != ids[0] {
			t.Fatalf("got task ids %v, want one id", ids)
		}
		if fresh[i] {
			created++
		}
	}
	if created != 1 || countRows(t, s, "tasks") != 1 {
		t.Fatalf("got %d fresh creations and %d rows, want 1 and 1", created, countRows(t, s, "tasks"))
	}
}

func TestCreateTaskConcurrentPositions(t *testing.T) {
	t.Parallel()
	bothEngines(t, testCreateTaskConcurrentPositions)
}

func testCreateTaskConcurrentPositions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("4000 inserts")
	}
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if _, _, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[1].ID,
					Title: fmt.Sprintf("w%d-%d", w, i)}); err != nil {
					t.Errorf("worker %d task %d: %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := countRows(t, s, "tasks"); n != workers*each {
		t.Fatalf("got %d tasks, want %d", n, workers*each)
	}
	checkDense(t, s, b.steps[1].ID)
}

func TestUpdateTask(t *testing.T) {
	t.Parallel()
	bothEngines(t, testUpdateTask)
}

func testUpdateTask(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	task := mustTask(t, s, b, "", "old")
	title, state, prompt := "new", kanban.TaskInProgress, "go"
	got, err := s.UpdateTask(ctx, task.ID, kanban.TaskUpdate{Title: &title, State: &state, LaunchPrompt: &prompt})
	if err != nil || got.Title != "new" || got.State != state || got.LaunchPrompt != "go" || got.Description != "" {
		t.Fatalf("got %+v, %v; want title new, IN_PROGRESS, launch prompt go", got, err)
	}
	// Bounds and the state enum are the contracts' (task.update,
	// task.set_state); the store holds the single-line rule.
	twoLines := "new\ntitle"
	_, err = s.UpdateTask(ctx, task.ID, kanban.TaskUpdate{Title: &twoLines})
	wantCode(t, err, kanban.CodeValidation)
	if again, _ := s.GetTask(ctx, task.ID); again.Title != "new" || again.State != state {
		t.Fatalf("got %+v after failed updates, want unchanged", again)
	}
	_, err = s.UpdateTask(ctx, "missing", kanban.TaskUpdate{Title: &title})
	wantCode(t, err, kanban.CodeNotFound)
}

// boardOrder returns the titles on step in position order.
func boardOrder(t *testing.T, s *Store, b board, stepID string) string {
	t.Helper()
	checkDense(t, s, stepID)
	l, err := s.ListTasks(context.Background(), kanban.TaskFilter{WorkspaceID: b.ws.ID, WorkflowStepID: stepID,
		IncludeArchived: true}, kanban.Page{Limit: kanban.MaxLimit})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	var titles []string
	for _, task := range l.Items {
		titles = append(titles, task.Title)
	}
	return strings.Join(titles, ",")
}

func TestMoveTask(t *testing.T) {
	t.Parallel()
	bothEngines(t, testMoveTask)
}

func testMoveTask(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	src, dst := b.steps[0].ID, b.steps[1].ID
	tasks := map[string]*kanban.Task{}
	for _, n := range []string{"a", "b", "c", "d"} {
		tasks[n] = mustTask(t, s, b, src, n)
	}
	mustTask(t, s, b, dst, "x")
	moves := []struct {
		task, step string
		pos        int
		wantSrc    string
		wantDst    string
	}{
		{"a", src, 2, "b,c,a,d", "x"},
		{"d", src, 0, "d,b,c,a", "x"},
		{"b", src, 99, "d,c,a,b", "x"},
		{"c", dst, 0, "d,a,b", "c,x"},
		{"d", dst, -1, "a,b", "c,x,d"},
		{"a", dst, 1, "b", "c,a,x,d"},
		{"b", dst, 100, "", "c,a,x,d,b"},
	}
	for _, m := range moves {
		got, err := s.MoveTask(ctx, tasks[m.task].ID, m.step, m.pos)
		if err != nil {
			t.Fatalf("move %s: %v", m.task, err)
		}
		if got.WorkflowStepID != m.step {
			t.Fatalf("got step %s, want %s", got.WorkflowStepID, m.step)
		}
		if gs, gd := boardOrder(t, s, b, src), boardOrder(t, s, b, dst); gs != m.wantSrc || gd != m.wantDst {
			t.Fatalf("after moving %s: got %q / %q, want %q / %q", m.task, gs, gd, m.wantSrc, m.wantDst)
		}
	}
	other := newBoard(t, s, "Other")
	_, err := s.MoveTask(ctx, tasks["a"].ID, other.steps[0].ID, 0)
	wantCode(t, err, kanban.CodeValidation)
	_, err = s.MoveTask(ctx, tasks["a"].ID, src, -2)
	wantCode(t, err, kanban.CodeValidation)
	_, err = s.MoveTask(ctx, tasks["a"].ID, "missing", 0)
	wantCode(t, err, kanban.CodeNotFound)
	_, err = s.MoveTask(ctx, "missing", src, 0)
	wantCode(t, err, kanban.CodeNotFound)
}

func TestMoveTaskWIPLimit(t *testing.T) {
	t.Parallel()
	bothEngines(t, testMoveTaskWIPLimit)
}

func testMoveTaskWIPLimit(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	limit := 2
	if _, err := s.UpdateStep(ctx, b.steps[1].ID, kanban.StepUpdate{WIPLimit: &limit}); err != nil {
		t.Fatalf("set wip: %v", err)
	}
	in1, in2 := mustTask(t, s, b, b.steps[1].ID, "in1"), mustTask(t, s, b, b.steps[1].ID, "in2")
	out := mustTask(t, s, b, "", "out")
	before := snapshot(t, s) + boardOrder(t, s, b, b.steps[0].ID) + "|" + boardOrder(t, s, b, b.steps[1].ID)
	_, err := s.MoveTask(ctx, out.ID, b.steps[1].ID, 0)
	wantCode(t, err, kanban.CodeConflict)
	if !strings.Contains(err.Error(), "wip_limit") {
		t.Fatalf("got %q, want a message naming wip_limit", err)
	}
	after := snapshot(t, s) + boardOrder(t, s, b, b.steps[0].ID) + "|" + boardOrder(t, s, b, b.steps[1].ID)
	if after != before {
		t.Fatalf("got %s, want unchanged %s", after, before)
	}
	if _, err := s.MoveTask(ctx, in2.ID, b.steps[1].ID, 0); err != nil {
		t.Fatalf("reorder within a full step: got %v, want success", err)
	}
	if _, err := s.ArchiveTask(ctx, in1.ID); err != nil {
		t.Fatalf("archive: %v", err)
	}
	if _, err := s.MoveTask(ctx, out.ID, b.steps[1].ID, -1); err != nil {
		t.Fatalf("move after archiving one: got %v, want success (archived tasks do not count)", err)
	}
}

func TestArchiveTask(t *testing.T) {
	t.Parallel()
	bothEngines(t, testArchiveTask)
}

func testArchiveTask(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	task := mustTask(t, s, b, "", "a")
	first, err := s.ArchiveTask(ctx, task.ID)
	if err != nil || first.ArchivedAt == nil {
		t.Fatalf("got %+v, %v; want archived", first, err)
	}
	second, err := s.ArchiveTask(ctx, task.ID)
	if err != nil || second.ArchivedAt == nil || !second.ArchivedAt.Equal(*first.ArchivedAt) {
		t.Fatalf("got %+v, %v; want the first archived_at kept", second, err)
	}
	_, err = s.ArchiveTask(ctx, "missing")
	wantCode(t, err, kanban.CodeNotFound)
}

func TestDeleteTask(t *testing.T) {
	t.Parallel()
	bothEngines(t, testDeleteTask)
}

func testDeleteTask(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	a, p := mustTask(t, s, b, "", "a"), mustTask(t, s, b, "", "p")
	c, _, _ := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "c", ParentID: p.ID, BlockedBy: []string{p.ID}})
	if _, err := s.AddDependency(ctx, p.ID, a.ID); err != nil {
		t.Fatalf("add dependency: %v", err)
	}
	if err := s.DeleteTask(ctx, p.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	got, err := s.GetTask(ctx, c.ID)
	if err != nil || got.ParentID != "" {
		t.Fatalf("got %+v, %v; want the child detached", got, err)
	}
	if n := countRows(t, s, "task_dependencies"); n != 0 {
		t.Fatalf("got %d edges, want 0", n)
	}
	if order := boardOrder(t, s, b, b.steps[0].ID); order != "a,c" {
		t.Fatalf("got %q, want a,c", order)
	}
	wantCode(t, s.DeleteTask(ctx, p.ID), kanban.CodeNotFound)
}

func TestQueuedTasksCount(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s, ctx := newTestStore(t), context.Background()
		b := newBoard(t, s, "Q")
		a, c, archived := mustTask(t, s, b, "", "a"), mustTask(t, s, b, "", "c"), mustTask(t, s, b, "", "archived")
		mustTask(t, s, b, "", "not queued")
		for _, task := range []*kanban.Task{a, c, archived} {
			if _, err := s.QueueTask(ctx, task.ID, b.steps[1].ID); err != nil {
				t.Fatalf("queue: %v", err)
			}
		}
		if _, err := s.ArchiveTask(ctx, archived.ID); err != nil {
			t.Fatal(err)
		}
		if n, err := s.QueuedTasks(ctx); err != nil || n != 2 {
			t.Fatalf("queued tasks %d, %v; want 2 (the archived one not counted)", n, err)
		}
	})
}
