package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
)

// TestMain stops the throwaway PostgreSQL cluster after the tests.
func TestMain(m *testing.M) { pgtest.Main(m) }

// engines is the table every store test runs over: each test runs once
// per engine, as the subtests "sqlite" and "postgres".
var engines = []Engine{SQLite, Postgres}

// bothEngines runs test once per engine. The store a test opens
// (newTestStore) is of the engine named by its first-level subtest.
func bothEngines(t *testing.T, test func(t *testing.T)) {
	t.Helper()
	for _, e := range engines {
		t.Run(string(e), test)
	}
}

// engineOf is the engine of t: the name of its test's first-level subtest
// when that is an engine's, else SQLite.
func engineOf(t testing.TB) Engine {
	if parts := strings.Split(t.Name(), "/"); len(parts) > 1 && Engine(parts[1]) == Postgres {
		return Postgres
	}
	return SQLite
}

// newTestStore opens a fresh database of t's engine (a temporary
// directory, or a new database on the throwaway PostgreSQL cluster),
// closed when the test ends.
func newTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := openTestStore(t, testLocation(t))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return s
}

// testLocation is a fresh, empty database of t's engine: a directory for
// SQLite, a URL for PostgreSQL.
func testLocation(t testing.TB) string {
	t.Helper()
	if engineOf(t) == Postgres {
		return pgtest.Schema(t)
	}
	return t.TempDir()
}

// openTestStore opens the database at loc (see testLocation).
func openTestStore(t testing.TB, loc string) (*Store, error) {
	t.Helper()
	if IsPostgresURL(loc) {
		return OpenPostgres(context.Background(), loc)
	}
	if _, err := os.Stat(loc); err != nil {
		t.Fatalf("test location: %v", err)
	}
	return Open(context.Background(), loc)
}

// board is a workspace with one workflow of four steps, built through the
// service methods.
type board struct {
	ws    *kanban.Workspace
	wf    *kanban.Workflow
	steps []*kanban.WorkflowStep // Backlog (start), In Progress, Review, Done
}

// newBoard creates a workspace named name with a "Kanban" workflow and the
// steps Backlog, In Progress, Review, Done.
func newBoard(t testing.TB, s *Store, name string) board {
	t.Helper()
	ctx := context.Background()
	ws, err := s.CreateWorkspace(ctx, name, "")
	if err != nil {
		t.Fatalf("create workspace: %v", err)
	}
	wf, err := s.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: "Kanban"})
	if err != nil {
		t.Fatalf("create workflow: %v", err)
	}
	b := board{ws: ws, wf: wf}
	for _, n := range []string{"Backlog", "In Progress", "Review", "Done"} {
		st, err := s.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: wf.ID, Name: n, AllowManualMove: true})
		if err != nil {
			t.Fatalf("create step %s: %v", n, err)
		}
		b.steps = append(b.steps, st)
	}
	return b
}

// mustTask creates a task with title on step (the start step when empty).
func mustTask(t testing.TB, s *Store, b board, stepID, title string) *kanban.Task {
	t.Helper()
	task, _, err := s.CreateTask(context.Background(), kanban.TaskCreate{
		WorkspaceID: b.ws.ID, WorkflowStepID: stepID, Title: title})
	if err != nil {
		t.Fatalf("create task %q: %v", title, err)
	}
	return task
}

// countRows counts the rows of table (a constant in the test).
func countRows(t testing.TB, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.stmts.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// snapshot renders the row count of every table the store writes, to
// check that a failed call wrote nothing.
func snapshot(t testing.TB, s *Store) string {
	t.Helper()
	out := ""
	for _, tbl := range []string{"workspaces", "workflows", "workflow_steps", "tasks", "task_dependencies",
		"repositories", "task_repositories", "task_sessions", "session_messages", "questions", "task_plans",
		"task_plan_revisions", "task_documents", "task_document_revisions", "task_artifacts", "agents",
		"agent_profiles", "agent_profile_mcp_configs", "executors", "executor_profiles",
		"notifications", "notification_settings", "notification_channels", "notification_deliveries"} {
		out += fmt.Sprintf("%s=%d ", tbl, countRows(t, s, tbl))
	}
	return out
}

// checkSnapshot fails the test unless the row counts still equal before.
func checkSnapshot(t testing.TB, s *Store, before string) {
	t.Helper()
	if after := snapshot(t, s); after != before {
		t.Fatalf("got rows %s after a failed call, want unchanged %s", after, before)
	}
}

// refusal is a call that must fail with code.
type refusal struct {
	name string
	call func() error
	code kanban.Code
}

// checkRefusals runs each refusal as a subtest: it must fail with its code
// and write nothing.
func checkRefusals(t *testing.T, s *Store, tests []refusal) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, s)
			wantCode(t, tt.call(), tt.code)
			checkSnapshot(t, s, before)
		})
	}
}

// wantCode fails the test unless err is a *kanban.Error with code.
func wantCode(t testing.TB, err error, code kanban.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("got nil error, want %s", code)
	}
	if got := kanban.ErrorCode(err); got != code {
		t.Fatalf("got error %v (code %s), want code %s", err, got, code)
	}
}

// stepPositions returns the positions (ranks) the store exposes for the
// tasks on step.
func stepPositions(t testing.TB, s *Store, stepID string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range stepRows(t, s, stepID) {
		out[r.id] = r.rank
	}
	return out
}

// stepRow is a task of a step as stored: its key and the rank rankOf gives.
type stepRow struct {
	id   string
	key  int64
	rank int
}

// stepRows returns the tasks of step in key order.
func stepRows(t testing.TB, s *Store, stepID string) []stepRow {
	t.Helper()
	rows, err := s.stmts.QueryContext(context.Background(), `SELECT id, position, `+rankOf("tasks")+`
		FROM tasks WHERE workflow_step_id = ? ORDER BY position, id`, stepID)
	if err != nil {
		t.Fatalf("positions: %v", err)
	}
	defer func() { _ = rows.Close() }()
	var out []stepRow
	for rows.Next() {
		var r stepRow
		if err := rows.Scan(&r.id, &r.key, &r.rank); err != nil {
			t.Fatalf("positions: %v", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("positions: %v", err)
	}
	return out
}

// checkDense fails unless the step's keys are unique and the positions
// the store exposes are exactly their ranks 0..n-1, and unless the step's
// task_blocks counts are those of its tasks' keys.
func checkDense(t testing.TB, s *Store, stepID string) {
	t.Helper()
	want := map[int64]int{}
	rs := stepRows(t, s, stepID)
	for i, r := range rs {
		if r.rank != i {
			t.Fatalf("task %s (key %d) has position %d, want %d, its rank", r.id, r.key, r.rank, i)
		}
		if i > 0 && rs[i-1].key == r.key {
			t.Fatalf("task %s shares key %d with the task before it", r.id, r.key)
		}
		want[r.key>>blockShift]++
	}
	rows, err := s.stmts.QueryContext(context.Background(), `SELECT block, n FROM task_blocks WHERE step_id = ? AND n <> 0`, stepID)
	if err != nil {
		t.Fatalf("blocks: %v", err)
	}
	defer func() { _ = rows.Close() }()
	got := map[int64]int{}
	for rows.Next() {
		var b int64
		var n int
		if err := rows.Scan(&b, &n); err != nil {
			t.Fatalf("blocks: %v", err)
		}
		got[b] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("blocks: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("task_blocks of step (-counted +stored):\n%s", diff)
	}
}
