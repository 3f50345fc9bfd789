package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
)

// TestOpenNewerPostgresSchemaWritesNothing: on PostgreSQL a newer schema
// is refused before anything writes. The second open runs with
// default_transaction_read_only, so any write it tried (the migration
// table's CREATE, a migration) would fail with another error first.
func TestOpenNewerPostgresSchemaWritesNothing(t *testing.T) {
	t.Parallel()
	u := pgtest.Schema(t)
	s := must(OpenPostgres(t.Context(), u))(t)
	future := LatestVersion() + 1
	if _, err := s.DB().Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, 'future.sql', '')`, future); err != nil {
		t.Fatalf("insert future version: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	ro := u + sep + "default_transaction_read_only=on"
	s2, err := OpenPostgres(t.Context(), ro)
	if err == nil {
		_ = s2.Close()
		t.Fatal("open: got nil error, want the newer-schema refusal")
	}
	var ne *NewerSchemaError
	if !errors.As(err, &ne) || ne.Database != future || ne.Binary != LatestVersion() {
		t.Fatalf("open: got %v, want a NewerSchemaError %d > %d", err, future, LatestVersion())
	}
	if v, err := PostgresSchemaVersion(t.Context(), ro); err != nil || v != future {
		t.Fatalf("schema version: got %d (%v), want %d", v, err, future)
	}
}

// TestRollingUpgradeAcrossOneSchemaVersion: two backends of one release
// share a PostgreSQL database; one is upgraded (stopped, and the next
// release's additive migration applied as its start would, under the
// migration lock). The backend still on the old release goes on reading
// and writing through the new schema (prepared statements and all), sees
// the upgraded backend's writes, and an old binary started now refuses
// the newer schema instead of running on it.
func TestRollingUpgradeAcrossOneSchemaVersion(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	u := pgtest.Schema(t)
	old := must(OpenPostgres(ctx, u))(t)
	t.Cleanup(func() { _ = old.Close() })
	upgraded := must(OpenPostgres(ctx, u))(t)
	b := newBoard(t, old, "Rolling")
	before := mustTask(t, old, b, "", "before the upgrade")
	if _, err := old.ListTasks(ctx, kanban.TaskFilter{WorkspaceID: b.ws.ID}, kanban.Page{Limit: 10}); err != nil {
		t.Fatalf("list before the upgrade: %v", err) // prepares the statements the old backend keeps
	}
	if err := upgraded.Close(); err != nil {
		t.Fatal(err)
	}
	next := LatestVersion() + 1
	ms := must(loadMigrations(Postgres))(t)
	ms = append(ms, migration{version: next, name: "upgrade.postgres.sql", sql: `
		ALTER TABLE tasks ADD COLUMN upgrade_note TEXT NOT NULL DEFAULT '';
		CREATE INDEX idx_tasks_upgrade_note ON tasks (upgrade_note);`})
	upgraded = must(OpenPostgres(ctx, u))(t) // the new release's pool, before its own migration
	t.Cleanup(func() { _ = upgraded.Close() })
	conn := must(upgraded.db.Conn(ctx))(t)
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrationLockKey); err != nil {
		t.Fatal(err)
	}
	applied, err := migrateTo(ctx, conn, Postgres, ms)
	_, _ = conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, migrationLockKey)
	_ = conn.Close()
	if err != nil || len(applied) != 1 {
		t.Fatalf("the next release's migration: got %v, %v, want it applied once", applied, err)
	}
	if _, err := upgraded.db.ExecContext(ctx, `UPDATE tasks SET upgrade_note = 'new release', title = 'renamed by the new release' WHERE id = $1`, before.ID); err != nil {
		t.Fatalf("the new release's write: %v", err)
	}
	// The old backend, still running, through the new schema:
	got, err := old.GetTask(ctx, before.ID)
	if err != nil || got.Title != "renamed by the new release" {
		t.Fatalf("old backend reads the new release's write: got %+v, %v", got, err)
	}
	after := mustTask(t, old, b, "", "after the upgrade")
	if _, err := old.MoveTask(ctx, after.ID, b.steps[1].ID, 0); err != nil {
		t.Fatalf("old backend moves a task: %v", err)
	}
	l, err := old.ListTasks(ctx, kanban.TaskFilter{WorkspaceID: b.ws.ID}, kanban.Page{Limit: 10})
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("old backend lists: got %v, %v, want 2 tasks", l, err)
	}
	s, err := OpenPostgres(ctx, u)
	var ne *NewerSchemaError
	if !errors.As(err, &ne) || ne.Database != next || ne.Binary != LatestVersion() {
		if s != nil {
			_ = s.Close()
		}
		t.Fatalf("an old binary starting after the upgrade: got %v, want a NewerSchemaError %d > %d", err, next, LatestVersion())
	}
}
