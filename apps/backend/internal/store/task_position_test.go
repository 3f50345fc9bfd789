package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// listedOrder returns the ids of step's tasks as ListTasks lists them (one
// page at a time, archived included), failing unless each listed position
// is the task's index in that order.
func listedOrder(t *testing.T, s *Store, b board, stepID string) []string {
	t.Helper()
	var ids []string
	p := kanban.Page{Limit: 3} // several pages: the cursors walk the keys
	for {
		l, err := s.ListTasks(context.Background(), kanban.TaskFilter{WorkspaceID: b.ws.ID, WorkflowStepID: stepID,
			IncludeArchived: true}, p)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		for _, task := range l.Items {
			if task.Position != len(ids) {
				t.Fatalf("task %q listed at index %d has position %d", task.Title, len(ids), task.Position)
			}
			ids = append(ids, task.ID)
		}
		if l.NextCursor == "" {
			return ids
		}
		p.Cursor = l.NextCursor
	}
}

// moveInModel is what MoveTask does to the order ids of a step: id leaves
// it and comes back at pos (-1 or past the end: last).
func moveInModel(ids []string, id string, pos int) []string {
	ids = slices.DeleteFunc(slices.Clone(ids), func(x string) bool { return x == id })
	if pos < 0 || pos > len(ids) {
		pos = len(ids)
	}
	return slices.Insert(ids, pos, id)
}

// TestMoveTaskPositions: moves to the first, a middle, the last, an
// explicit and a past-the-end position, within a step and across steps,
// leave each step's positions a permutation 0..n-1 in the order a dense
// renumbering gives, as listed, fetched and returned by the move.
func TestMoveTaskPositions(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s, ctx := newTestStore(t), context.Background()
		b := newBoard(t, s, "Moves")
		var todo, doing []string
		for i := range 8 {
			todo = append(todo, mustTask(t, s, b, "", fmt.Sprintf("t%d", i)).ID)
		}
		from, to := b.steps[0].ID, b.steps[1].ID
		moves := []struct {
			id     string
			stepID string
			pos    int
		}{
			{todo[7], from, 0}, {todo[0], from, 7}, {todo[3], from, 4}, {todo[5], from, 2}, {todo[2], from, -1},
			{todo[4], from, 100}, {todo[6], from, 3}, {todo[1], to, 0}, {todo[6], to, 0}, {todo[4], to, 1},
			{todo[1], to, -1}, {todo[0], from, 0}, {todo[6], from, 5},
		}
		for _, m := range moves {
			got, err := s.MoveTask(ctx, m.id, m.stepID, m.pos)
			if err != nil {
				t.Fatalf("move to %d: %v", m.pos, err)
			}
			todo = slices.DeleteFunc(todo, func(x string) bool { return x == m.id })
			doing = slices.DeleteFunc(doing, func(x string) bool { return x == m.id })
			if m.stepID == from {
				todo = moveInModel(todo, m.id, m.pos)
			} else {
				doing = moveInModel(doing, m.id, m.pos)
			}
			want := map[string][]string{from: todo, to: doing}
			if i := slices.Index(want[m.stepID], m.id); got.Position != i {
				t.Fatalf("move to %d: returned position %d, want %d", m.pos, got.Position, i)
			}
			for stepID, ids := range want {
				if order := listedOrder(t, s, b, stepID); !slices.Equal(order, ids) {
					t.Fatalf("after moving to %d: got order %v, want %v", m.pos, order, ids)
				}
				checkDense(t, s, stepID)
			}
			if fetched := must(s.GetTask(ctx, m.id))(t); fetched.Position != got.Position {
				t.Fatalf("get: position %d, want %d", fetched.Position, got.Position)
			}
			// Creation order, across both steps, two tasks a page.
			for p := (kanban.Page{Limit: 2}); ; {
				l := must(s.ListTaskSummaries(ctx, kanban.TaskFilter{WorkspaceID: b.ws.ID}, p))(t)
				for _, x := range l.Items {
					if i := slices.Index(want[x.WorkflowStepID], x.ID); x.Position != i {
						t.Fatalf("creation order: %s at position %d, want %d", x.Title, x.Position, i)
					}
				}
				if p.Cursor = l.NextCursor; p.Cursor == "" {
					break
				}
			}
		}
	})
}

// TestMoveTaskRenumbers: moves into the same gap halve it until no key
// is left between the neighbours; the step is then renumbered and every
// move still lands where a dense renumbering puts it.
func TestMoveTaskRenumbers(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s, ctx := newTestStore(t), context.Background()
		b := newBoard(t, s, "Gap")
		var ids []string
		for i := range 30 {
			ids = append(ids, mustTask(t, s, b, "", fmt.Sprintf("t%d", i)).ID)
		}
		step := b.steps[0].ID
		second := ids[1] // never moved: its key changes only when the step is renumbered
		before := stepKey(t, s, second)
		for i := range 28 { // log2(keyGap) = 20 moves fill the gap after the first task
			last := ids[len(ids)-1]
			if _, err := s.MoveTask(ctx, last, step, 1); err != nil {
				t.Fatalf("move %d: %v", i, err)
			}
			ids = moveInModel(ids, last, 1)
			if order := listedOrder(t, s, b, step); !slices.Equal(order, ids) {
				t.Fatalf("move %d: got order %v, want %v", i, order, ids)
			}
			checkDense(t, s, step)
		}
		if after := stepKey(t, s, second); after == before {
			t.Fatalf("the step was not renumbered: the unmoved task kept key %d", after)
		}
	})
}

// stepKey returns the stored key of task id.
func stepKey(t *testing.T, s *Store, id string) int64 {
	t.Helper()
	var k int64
	if err := s.stmts.QueryRowContext(context.Background(), `SELECT position FROM tasks WHERE id = ?`, id).Scan(&k); err != nil {
		t.Fatalf("key: %v", err)
	}
	return k
}

// TestMoveTaskConcurrent: writers moving tasks at random within and
// across two steps, and deleting some, leave both steps dense.
func TestMoveTaskConcurrent(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s, ctx := newTestStore(t), context.Background()
		b := newBoard(t, s, "Concurrent")
		var ids []string
		for i := range 40 {
			ids = append(ids, mustTask(t, s, b, "", fmt.Sprintf("t%d", i)).ID)
		}
		steps := []string{b.steps[0].ID, b.steps[1].ID}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 7)) //nolint:gosec // test randomness
				for i := range 25 {
					id := ids[rng.IntN(len(ids))]
					var err error
					if i == 24 && w < 2 {
						err = s.DeleteTask(ctx, id)
					} else {
						_, err = s.MoveTask(ctx, id, steps[rng.IntN(2)], rng.IntN(45)-1)
					}
					if err != nil && kanban.ErrorCode(err) != kanban.CodeNotFound {
						t.Errorf("writer %d op %d: %v", w, i, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		n := 0
		for _, st := range steps {
			checkDense(t, s, st)
			n += len(listedOrder(t, s, b, st))
		}
		if want := countRows(t, s, "tasks"); n != want {
			t.Fatalf("listed %d tasks on the steps, want %d", n, want)
		}
	})
}

// TestMigrationSparsePositions: migration 0023 turns each step's stored
// positions, dense or with the gaps an unarchive used to leave, into keys
// in the same order, positions 0..n-1, with the block counts the triggers
// keep from then on.
func TestMigrationSparsePositions(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		loc := testLocation(t)
		s := must(openTestStore(t, loc))(t)
		b := newBoard(t, s, "Legacy")
		var want []string
		for i := range 5 {
			want = append(want, mustTask(t, s, b, "", fmt.Sprintf("t%d", i)).ID)
		}
		// Back to the schema before 0023, with positions 0, 2, 3, 4, 6 in
		// reverse creation order.
		undo := []string{`DROP TRIGGER tasks_blocks_insert`, `DROP TRIGGER tasks_blocks_delete`, `DROP TRIGGER tasks_blocks_update`}
		if s.eng == Postgres {
			undo = []string{`DROP FUNCTION tasks_blocks_count CASCADE`, `ALTER TABLE tasks ALTER COLUMN position TYPE INTEGER`}
		}
		undo = append(undo, `DROP TABLE task_blocks`, `DELETE FROM schema_migrations WHERE version = 23`)
		for _, q := range undo {
			if _, err := s.db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		slices.Reverse(want)
		for i, id := range want {
			if _, err := s.stmts.ExecContext(ctx, `UPDATE tasks SET position = ? WHERE id = ?`, []int{0, 2, 3, 4, 6}[i], id); err != nil {
				t.Fatalf("legacy position: %v", err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		s = must(openTestStore(t, loc))(t)
		defer func() { _ = s.Close() }()
		checkDense(t, s, b.steps[0].ID)
		if got := listedOrder(t, s, b, b.steps[0].ID); !slices.Equal(got, want) {
			t.Fatalf("got order %v, want %v", got, want)
		}
		if k := stepKey(t, s, want[4]); k != 5*keyGap {
			t.Fatalf("last task: key %d, want %d", k, 5*keyGap)
		}
		mustTask(t, s, b, "", "after") // the triggers count it
		checkDense(t, s, b.steps[0].ID)
	})
}

// TestBoardPagePositions: a board-order page of live tasks, or of a few
// matching a state far apart on a large step, lists each task at its
// rank among all the step's tasks, archived ones included.
func TestBoardPagePositions(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s, ctx := newTestStore(t), context.Background()
		b := newBoard(t, s, "Pages")
		const n = maxRankSpan + 200
		seedStep(t, s, b, n)
		step := b.steps[1].ID
		all := listedOrder(t, s, b, step)
		for _, i := range []int{1, 2, 5, 6, 7} {
			must(s.ArchiveTask(ctx, all[i]))(t)
		}
		picked := []int{0, 3, n - 1} // one page, wider than maxRankSpan
		for _, i := range picked {
			if _, err := s.stmts.ExecContext(ctx, `UPDATE tasks SET state = 'REVIEW' WHERE id = ?`, all[i]); err != nil {
				t.Fatalf("state: %v", err)
			}
		}
		cases := []struct {
			name string
			f    kanban.TaskFilter
			want []int // indexes into all, in order
		}{
			{"live", kanban.TaskFilter{}, []int{0, 3, 4, 8, 9, 10}},
			{"review, far apart", kanban.TaskFilter{State: kanban.TaskState("REVIEW")}, picked},
		}
		for _, c := range cases {
			c.f.WorkspaceID, c.f.WorkflowStepID = b.ws.ID, step
			p := kanban.Page{Limit: 3}
			var got []int
			for len(got) < len(c.want) {
				l, err := s.ListTasks(ctx, c.f, p)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				for _, task := range l.Items {
					if task.ID != all[task.Position] {
						t.Fatalf("%s: task %s listed at position %d, where %s is", c.name, task.ID, task.Position, all[task.Position])
					}
					got = append(got, task.Position)
				}
				p.Cursor = l.NextCursor
				if l.NextCursor == "" {
					break
				}
			}
			if !slices.Equal(got[:min(len(got), len(c.want))], c.want) {
				t.Fatalf("%s: got positions %v, want %v first", c.name, got, c.want)
			}
			sums := must(s.ListTaskSummaries(ctx, c.f, kanban.Page{Limit: 2}))(t)
			details := must(s.ListTaskDetails(ctx, c.f, kanban.Page{Limit: 2}))(t)
			for i := range 2 {
				if sums.Items[i].Position != c.want[i] || details.Items[i].Position != c.want[i] {
					t.Fatalf("%s: summary at %d, detail at %d, want %d", c.name, sums.Items[i].Position, details.Items[i].Position, c.want[i])
				}
			}
		}
	})
}
