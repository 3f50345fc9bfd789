package store

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// seedStep inserts n tasks on the board's In Progress step (positions
// 0..n-1, keys keyGap apart) with raw inserts in one transaction, far faster than CreateTask.
func seedStep(tb testing.TB, s *Store, b board, n int) {
	tb.Helper()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatalf("begin: %v", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	q := `INSERT INTO tasks (` + taskCols + `) VALUES (?, ?, ?, ?, NULL, ?, '', 'TODO', ?, NULL, 0, '', NULL, ?, ?, NULL, NULL, ?, 0, '', NULL)`
	if s.eng == Postgres {
		q = rebind(q)
	}
	ins, err := tx.PrepareContext(ctx, q)
	if err != nil {
		tb.Fatalf("prepare: %v", err)
	}
	defer func() { _ = ins.Close() }()
	base := kanban.Now()
	for i := range n {
		ts := fmtTime(base.Add(time.Duration(i) * time.Microsecond))
		if _, err := ins.ExecContext(ctx, kanban.NewID(), b.ws.ID, b.wf.ID, b.steps[1].ID, fmt.Sprintf("task %d", i), TaskKey(i), ts, ts, ts); err != nil {
			tb.Fatalf("insert: %v", err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatalf("commit: %v", err)
	}
}

// deepCursor returns the cursor of a page starting around position pos.
func deepCursor(tb testing.TB, s *Store, stepID string, pos int) string {
	tb.Helper()
	var id string
	var key int64
	if err := s.db.QueryRow(`SELECT id, position FROM tasks WHERE workflow_step_id = ? ORDER BY position, id LIMIT 1 OFFSET ?`,
		stepID, pos).Scan(&id, &key); err != nil {
		tb.Fatalf("deep cursor: %v", err)
	}
	return encodeCursor(tasksByPosition.what, key, id)
}

func benchmarkListTasks(b *testing.B, deep bool) {
	s := newTestStore(b)
	bd := newBoard(b, s, "Bench")
	const n = 100_000
	seedStep(b, s, bd, n)
	ctx := context.Background()
	f := kanban.TaskFilter{WorkspaceID: bd.ws.ID, WorkflowStepID: bd.steps[1].ID}
	p := kanban.Page{Limit: kanban.DefaultLimit}
	if deep {
		p.Cursor = deepCursor(b, s, bd.steps[1].ID, n-1000)
	}
	b.ReportAllocs()
	for b.Loop() {
		l, err := s.ListTasks(ctx, f, p)
		if err != nil || len(l.Items) != kanban.DefaultLimit {
			b.Fatalf("got %v, %d items; want a full page", err, len(l.Items))
		}
	}
}

// BenchmarkListTasksFirstPage100k lists the first page of one step holding
// 100,000 tasks.
func BenchmarkListTasksFirstPage100k(b *testing.B) { benchmarkListTasks(b, false) }

// BenchmarkListTasksDeepPage100k lists a page 99,000 tasks deep in the same step.
func BenchmarkListTasksDeepPage100k(b *testing.B) { benchmarkListTasks(b, true) }

// TestListTasksQueryPlans checks that every ListTasks shape, first and deep
// pages, walks an index in order: no full scan, no sort (a temp B-tree).
func TestListTasksQueryPlans(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	b := newBoard(t, s, "W")
	seedStep(t, s, b, 200)
	parent := mustTask(t, s, b, "", "parent")
	cursors := map[bool]string{true: encodeCursor(tasksByPosition.what, 5, "x"), false: encodeCursor(tasksByCreation.what, fmtTime(kanban.Now()), "x")}
	cases := []struct {
		f     kanban.TaskFilter
		index string
	}{
		{kanban.TaskFilter{WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[1].ID}, "idx_tasks_step"},
		{kanban.TaskFilter{WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[1].ID, State: kanban.TaskTodo, IncludeArchived: true}, "idx_tasks_step"},
		{kanban.TaskFilter{WorkspaceID: b.ws.ID, WorkflowID: b.wf.ID}, "idx_tasks_workflow_created"},
		{kanban.TaskFilter{WorkspaceID: b.ws.ID, ParentID: parent.ID}, "idx_tasks_parent"},
		{kanban.TaskFilter{WorkspaceID: b.ws.ID, State: kanban.TaskReview}, "idx_tasks_workspace_created"},
	}
	for _, c := range cases {
		for _, deep := range []bool{false, true} {
			p := kanban.Page{Limit: 10}
			if deep {
				p.Cursor = cursors[c.f.WorkflowStepID != ""]
			}
			where, wargs := taskFilterWhere(c.f)
			query, args, err := taskListing(c.f).query(p, where, wargs...)
			if err != nil {
				t.Fatalf("build query: %v", err)
			}
			plan := explain(t, s, query, args)
			if !strings.Contains(plan, c.index) || strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN tasks") {
				t.Errorf("filter %+v deep=%v: got plan %q, want an ordered walk of %s", c.f, deep, plan, c.index)
			}
		}
	}
}

func explain(t *testing.T, s *Store, query string, args []any) string {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatalf("explain: %v", err)
		}
		out = append(out, detail)
	}
	return strings.Join(out, "; ")
}

// benchmarkCreateTasks creates tasks with their sessions (what
// create_task_kandev writes) from 8 goroutines, with batches of at most
// limit writers per commit.
func benchmarkCreateTasks(b *testing.B, limit int) {
	s := newTestStore(b)
	s.writes.limit = limit
	bd := newBoard(b, s, "Bench")
	ctx := context.Background()
	in := kanban.TaskCreate{WorkspaceID: bd.ws.ID, Title: "Benchmark task", Description: strings.Repeat("p", 200)}
	b.ReportAllocs()
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	batches, writes := s.writes.batches.Load(), s.writes.writes.Load()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, _, err := s.CreateTaskWithSession(ctx, in, kanban.SessionCreate{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if n := s.writes.batches.Load() - batches; n > 0 {
		b.ReportMetric(float64(s.writes.writes.Load()-writes)/float64(n), "writes/commit")
	}
}

// BenchmarkCreateTasksGroupCommit is 8 concurrent writers with group commit.
func BenchmarkCreateTasksGroupCommit(b *testing.B) { benchmarkCreateTasks(b, maxBatch) }

// BenchmarkCreateTasksOneCommitEach is the same with one commit per write,
// the baseline of group commit.
func BenchmarkCreateTasksOneCommitEach(b *testing.B) { benchmarkCreateTasks(b, 1) }
