package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestOpenMigratesEmptyDir(t *testing.T) {
	t.Parallel()
	bothEngines(t, testOpenMigratesEmptyDir)
}

func testOpenMigratesEmptyDir(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	var v int
	if err := s.stmts.QueryRowContext(context.Background(), `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		t.Fatalf("read schema version: %v", err)
	}
	if want := LatestVersion(); v != want || want < 1 {
		t.Fatalf("got schema version %d, want %d (>= 1)", v, want)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	bothEngines(t, testOpenRefusesNewerSchema)
}

func testOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	loc := testLocation(t)
	s, err := openTestStore(t, loc)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if _, err := s.stmts.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future.sql', '')`); err != nil {
		t.Fatalf("insert future version: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	s2, err := openTestStore(t, loc)
	if err == nil {
		_ = s2.Close()
		t.Fatal("got nil error opening a newer database, want an error")
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Fatalf("got error %q, want it to mention %q", err, "newer")
	}
}

func TestOpenTwiceKeepsData(t *testing.T) {
	t.Parallel()
	bothEngines(t, testOpenTwiceKeepsData)
}

func testOpenTwiceKeepsData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	loc := testLocation(t)
	s, err := openTestStore(t, loc)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	ws, err := s.CreateWorkspace(ctx, "Keep", "")
	if err != nil {
		t.Fatalf("create workspace: %v", err)
	}
	_ = s.Close()
	s2, err := openTestStore(t, loc)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer func() { _ = s2.Close() }()
	got, err := s2.GetWorkspace(ctx, ws.ID)
	if err != nil || got.Name != "Keep" {
		t.Fatalf("got %+v, %v; want the workspace named Keep", got, err)
	}
}

func TestWorkspaceCRUD(t *testing.T) {
	t.Parallel()
	bothEngines(t, testWorkspaceCRUD)
}

func testWorkspaceCRUD(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	ws, err := s.CreateWorkspace(ctx, "Team", "desc")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := s.GetWorkspace(ctx, ws.ID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Name != "Team" || got.Description != "desc" || !got.CreatedAt.Equal(ws.CreatedAt) {
		t.Fatalf("got %+v, want %+v", got, ws)
	}
	name := "Renamed"
	up, err := s.UpdateWorkspace(ctx, ws.ID, &name, nil)
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if up.Name != "Renamed" || up.Description != "desc" {
		t.Fatalf("got name %q description %q, want Renamed, desc", up.Name, up.Description)
	}
	_, err = s.GetWorkspace(ctx, "missing")
	wantCode(t, err, kanban.CodeNotFound)
	_, err = s.UpdateWorkspace(ctx, "missing", &name, nil)
	wantCode(t, err, kanban.CodeNotFound)
}

func TestWorkspaceValidation(t *testing.T) {
	t.Parallel()
	bothEngines(t, testWorkspaceValidation)
}

func testWorkspaceValidation(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	ws, err := s.CreateWorkspace(ctx, strings.Repeat("é", kanban.MaxNameLen), "")
	if err != nil {
		t.Fatalf("got %v for a %d-rune name, want success", err, kanban.MaxNameLen)
	}
	before := snapshot(t, s)
	cases := []struct {
		name, field, nm, desc string
	}{
		// Bounds are the contracts' (workspace.create, workspace.update); the
		// store holds the single-line rule.
		{"two-line name", "name", "a\nb", ""},
		{"NUL in name", "name", "a\x00b", ""},
	}
	for _, c := range cases {
		_, err := s.CreateWorkspace(ctx, c.nm, c.desc)
		wantCode(t, err, kanban.CodeValidation)
		if e, _ := kanban.AsError(err); e.Field != c.field {
			t.Errorf("%s: got field %q, want %q", c.name, e.Field, c.field)
		}
		if c.nm != "" && strings.Contains(err.Error(), c.nm) {
			t.Errorf("%s: error %q echoes the value", c.name, err)
		}
		_, err = s.UpdateWorkspace(ctx, ws.ID, &c.nm, &c.desc)
		wantCode(t, err, kanban.CodeValidation)
	}
	checkSnapshot(t, s, before)
	got, _ := s.GetWorkspace(ctx, ws.ID)
	if got.Name != ws.Name {
		t.Fatalf("got name changed after failed updates, want unchanged")
	}
}

func TestListWorkspacesPaginates(t *testing.T) {
	t.Parallel()
	bothEngines(t, testListWorkspacesPaginates)
}

func testListWorkspacesPaginates(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	want := map[string]bool{}
	for i := range 7 {
		ws, err := s.CreateWorkspace(ctx, fmt.Sprintf("ws-%d", i), "")
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		want[ws.ID] = true
	}
	seen := map[string]bool{}
	cursor, pages := "", 0
	var prev kanban.Workspace
	for {
		l, err := s.ListWorkspaces(ctx, kanban.Page{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		pages++
		for _, w := range l.Items {
			if seen[w.ID] {
				t.Fatalf("got workspace %s twice, want each once", w.ID)
			}
			if prev.ID != "" && (w.CreatedAt.Before(prev.CreatedAt) || (w.CreatedAt.Equal(prev.CreatedAt) && w.ID < prev.ID)) {
				t.Fatalf("got %s after %s, want (created_at, id) order", w.ID, prev.ID)
			}
			seen[w.ID], prev = true, w
		}
		if cursor = l.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != len(want) || pages != 3 {
		t.Fatalf("got %d workspaces in %d pages, want %d in 3", len(seen), pages, len(want))
	}
}

func TestListBadPage(t *testing.T) {
	t.Parallel()
	bothEngines(t, testListBadPage)
}

func testListBadPage(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	for _, p := range []kanban.Page{{Cursor: "not-a-cursor!"}, {Cursor: encodeCursor(workspaceListing.what, "x")}, {Cursor: encodeCursor("list workflows", "2026-01-01T00:00:00.000000Z", "x")}, {Limit: kanban.MaxLimit + 1}, {Limit: -1}} {
		_, err := s.ListWorkspaces(ctx, p)
		wantCode(t, err, kanban.CodeValidation)
		_, err = s.ListWorkflows(ctx, b.ws.ID, p)
		wantCode(t, err, kanban.CodeValidation)
		_, err = s.ListSteps(ctx, b.wf.ID, p)
		wantCode(t, err, kanban.CodeValidation)
		_, err = s.ListTasks(ctx, kanban.TaskFilter{WorkspaceID: b.ws.ID}, p)
		wantCode(t, err, kanban.CodeValidation)
		_, err = s.ListTasks(ctx, kanban.TaskFilter{WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[0].ID}, p)
		wantCode(t, err, kanban.CodeValidation)
		_, err = s.ListRepositories(ctx, b.ws.ID, p)
		wantCode(t, err, kanban.CodeValidation)
	}
	// A creation-order cursor is not a board-order cursor.
	mustTask(t, s, b, "", "a")
	mustTask(t, s, b, "", "b")
	l, err := s.ListTasks(ctx, kanban.TaskFilter{WorkspaceID: b.ws.ID}, kanban.Page{Limit: 1})
	if err != nil || l.NextCursor == "" {
		t.Fatalf("got %v, cursor %q; want a next cursor", err, l.NextCursor)
	}
	_, err = s.ListTasks(ctx, kanban.TaskFilter{WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[0].ID}, kanban.Page{Cursor: l.NextCursor})
	wantCode(t, err, kanban.CodeValidation)
	// A board-order cursor whose key is no integer.
	_, err = s.ListTasks(ctx, kanban.TaskFilter{WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[0].ID},
		kanban.Page{Cursor: encodeCursor(tasksByPosition.what, "1", "x")})
	wantCode(t, err, kanban.CodeValidation)
}

func TestIsUniqueConstraint(t *testing.T) {
	t.Parallel()
	bothEngines(t, testIsUniqueConstraint)
}

func testIsUniqueConstraint(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	_, err := s.stmts.ExecContext(ctx, `INSERT INTO workflow_steps (id, workflow_id, name, position, created_at, updated_at)
		VALUES ('dup', ?, 'Backlog', 9, '', '')`, b.wf.ID)
	if !isUniqueConstraint(err) {
		t.Fatalf("got isUniqueConstraint(%v) false, want true", err)
	}
	_, err = s.stmts.ExecContext(ctx, `INSERT INTO tasks (id, workspace_id, workflow_id, workflow_step_id, title, state, position,
		created_at, updated_at) VALUES ('x', ?, ?, ?, 't', 'NOPE', 0, '', '')`, b.ws.ID, b.wf.ID, b.steps[0].ID)
	if err == nil || isUniqueConstraint(err) {
		t.Fatalf("got isUniqueConstraint(%v) true, want false for a CHECK failure", err)
	}
	if isUniqueConstraint(fmt.Errorf("wrapped: %w", kanban.NotFound("x"))) {
		t.Fatal("got true for a non-SQLite error, want false")
	}
}

// TestOpenAppliesALaterMergedLowerMigration: a database that has a newer
// migration but not a lower-numbered one (it landed later) gets it.
func TestOpenAppliesALaterMergedLowerMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if _, err := s.db.Exec(`DROP INDEX idx_sessions_workspace`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`DELETE FROM schema_migrations WHERE version = 5`); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	s2, err := Open(ctx, dir)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer func() { _ = s2.Close() }()
	var n int
	if err := s2.db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'idx_sessions_workspace'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("migration 5 not applied again: %d indexes, %v", n, err)
	}
}

func TestDefaultWorkspaceID(t *testing.T) {
	t.Parallel()
	bothEngines(t, testDefaultWorkspaceID)
}

// testDefaultWorkspaceID: the default workspace is the first one
// ListWorkspaces lists, and an empty store has none.
func testDefaultWorkspaceID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestStore(t)
	if _, err := s.DefaultWorkspaceID(ctx); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Fatalf("empty store: got %v, want NOT_FOUND", err)
	}
	for _, name := range []string{"First", "Second", "Third"} {
		if _, err := s.CreateWorkspace(ctx, name, ""); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	l, err := s.ListWorkspaces(ctx, kanban.Page{Limit: 1})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("list: %v, %v", l, err)
	}
	got, err := s.DefaultWorkspaceID(ctx)
	if err != nil || got != l.Items[0].ID {
		t.Fatalf("got %q, %v, want %q (the first listed)", got, err, l.Items[0].ID)
	}
}
