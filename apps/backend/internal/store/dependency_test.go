package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestAddDependency(t *testing.T) {
	t.Parallel()
	bothEngines(t, testAddDependency)
}

func testAddDependency(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	a, bb := mustTask(t, s, b, "", "a"), mustTask(t, s, b, "", "b")
	d, err := s.AddDependency(ctx, a.ID, bb.ID)
	if err != nil || d.TaskID != a.ID || d.DependsOnTaskID != bb.ID || d.CreatedAt.IsZero() {
		t.Fatalf("got %+v, %v; want edge a→b", d, err)
	}
	again, err := s.AddDependency(ctx, a.ID, bb.ID)
	if err != nil || !again.CreatedAt.Equal(d.CreatedAt) {
		t.Fatalf("got %+v, %v; want the existing edge returned", again, err)
	}
	if n := countRows(t, s, "task_dependencies"); n != 1 {
		t.Fatalf("got %d edges, want 1", n)
	}
	blockers, err := s.ListBlockers(ctx, a.ID, kanban.Page{})
	if err != nil || len(blockers.Items) != 1 || blockers.Items[0].ID != bb.ID {
		t.Fatalf("got %+v, %v; want [b]", blockers, err)
	}
	blocked, err := s.ListBlocked(ctx, bb.ID, kanban.Page{})
	if err != nil || len(blocked.Items) != 1 || blocked.Items[0].ID != a.ID {
		t.Fatalf("got %+v, %v; want [a]", blocked, err)
	}
}

func TestAddDependencyRejects(t *testing.T) {
	t.Parallel()
	bothEngines(t, testAddDependencyRejects)
}

func testAddDependencyRejects(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	other := newBoard(t, s, "Other")
	a, bb, c := mustTask(t, s, b, "", "a"), mustTask(t, s, b, "", "b"), mustTask(t, s, b, "", "c")
	foreign := mustTask(t, s, other, "", "foreign")
	for _, e := range [][2]string{{a.ID, bb.ID}, {bb.ID, c.ID}} {
		if _, err := s.AddDependency(ctx, e[0], e[1]); err != nil {
			t.Fatalf("add edge: %v", err)
		}
	}
	cases := []struct {
		name, task, dep string
		code            kanban.Code
		msg             string
	}{
		{"self", a.ID, a.ID, kanban.CodeValidation, "a task cannot depend on itself"},
		{"cycle A→B→C→A", c.ID, a.ID, kanban.CodeValidation, "dependency would create a cycle"},
		{"two-cycle", bb.ID, a.ID, kanban.CodeValidation, "dependency would create a cycle"},
		{"cross workspace", a.ID, foreign.ID, kanban.CodeValidation, "tasks must be in the same workspace"},
		{"cross workspace reversed", foreign.ID, a.ID, kanban.CodeValidation, "tasks must be in the same workspace"},
		{"missing task", "nope", a.ID, kanban.CodeNotFound, "not found"},
		{"missing dependency", a.ID, "nope", kanban.CodeNotFound, "not found"},
		{"empty", a.ID, "", kanban.CodeValidation, "is required"},
	}
	before := snapshot(t, s)
	for _, tc := range cases {
		_, err := s.AddDependency(ctx, tc.task, tc.dep)
		if got := kanban.ErrorCode(err); got != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v (%s), want %s mentioning %q", tc.name, err, got, tc.code, tc.msg)
		}
	}
	checkSnapshot(t, s, before)
	// A→C is a shortcut, not a cycle.
	if _, err := s.AddDependency(ctx, a.ID, c.ID); err != nil {
		t.Fatalf("got %v adding a→c, want success", err)
	}
}

func TestRemoveDependency(t *testing.T) {
	t.Parallel()
	bothEngines(t, testRemoveDependency)
}

func testRemoveDependency(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	a, bb := mustTask(t, s, b, "", "a"), mustTask(t, s, b, "", "b")
	if _, err := s.AddDependency(ctx, a.ID, bb.ID); err != nil {
		t.Fatalf("add: %v", err)
	}
	for range 2 { // the second removal finds no edge and still succeeds
		if err := s.RemoveDependency(ctx, a.ID, bb.ID); err != nil {
			t.Fatalf("remove: got %v, want success", err)
		}
	}
	if n := countRows(t, s, "task_dependencies"); n != 0 {
		t.Fatalf("got %d edges, want 0", n)
	}
	// After removal the reverse edge is no longer a cycle.
	if _, err := s.AddDependency(ctx, bb.ID, a.ID); err != nil {
		t.Fatalf("got %v, want success", err)
	}
	wantCode(t, s.RemoveDependency(ctx, "missing", a.ID), kanban.CodeNotFound)
}

// walkEdges pages through list with limit 4 and returns the ids, checking
// they ascend without repeats.
func walkEdges(t *testing.T, list func(kanban.Page) (*kanban.List[kanban.Task], error)) int {
	t.Helper()
	n, cursor, last := 0, "", ""
	for {
		l, err := list(kanban.Page{Limit: 4, Cursor: cursor})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		for _, task := range l.Items {
			if task.ID <= last {
				t.Fatalf("got %s after %s, want ascending unique ids", task.ID, last)
			}
			n, last = n+1, task.ID
		}
		if cursor = l.NextCursor; cursor == "" {
			return n
		}
	}
}

func TestListBlockersAndBlockedPaginate(t *testing.T) {
	t.Parallel()
	bothEngines(t, testListBlockersAndBlockedPaginate)
}

func testListBlockersAndBlockedPaginate(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	hub, sink := mustTask(t, s, b, "", "hub"), mustTask(t, s, b, "", "sink")
	for i := range 11 {
		d := mustTask(t, s, b, "", fmt.Sprintf("d%d", i))
		if _, err := s.AddDependency(ctx, hub.ID, d.ID); err != nil {
			t.Fatalf("add: %v", err)
		}
		if _, err := s.AddDependency(ctx, d.ID, hub.ID); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Fatalf("got %v adding the reverse edge, want a cycle error", err)
		}
		u := mustTask(t, s, b, "", fmt.Sprintf("u%d", i))
		if _, err := s.AddDependency(ctx, u.ID, sink.ID); err != nil {
			t.Fatalf("add: %v", err)
		}
	}
	if n := walkEdges(t, func(p kanban.Page) (*kanban.List[kanban.Task], error) { return s.ListBlockers(ctx, hub.ID, p) }); n != 11 {
		t.Fatalf("got %d blockers, want 11", n)
	}
	if n := walkEdges(t, func(p kanban.Page) (*kanban.List[kanban.Task], error) { return s.ListBlocked(ctx, sink.ID, p) }); n != 11 {
		t.Fatalf("got %d blocked, want 11", n)
	}
	_, err := s.ListBlocked(ctx, "missing", kanban.Page{})
	wantCode(t, err, kanban.CodeNotFound)
	_, err = s.ListBlockers(ctx, hub.ID, kanban.Page{Cursor: "%%%"})
	wantCode(t, err, kanban.CodeValidation)
	blocked, err := s.ListBlocked(ctx, hub.ID, kanban.Page{})
	if err != nil || len(blocked.Items) != 0 {
		t.Fatalf("got %v, %d items; want none blocked by hub", err, len(blocked.Items))
	}
}
