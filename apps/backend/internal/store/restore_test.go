package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRestoreRefusals: each refused restore leaves the target as it was
// (a missing data dir is not created, a non-empty one is untouched).
func TestRestoreRefusals(t *testing.T) {
	t.Parallel()
	good := backupOf(t)
	tests := []struct {
		name     string
		from     func(t *testing.T) string
		nonEmpty bool
		want     func(error) bool
	}{
		{"non-empty data dir", func(*testing.T) string { return good }, true,
			func(err error) bool { return errors.Is(err, ErrNotEmpty) }},
		{"not a SQLite file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "notes.db")
			if err := os.WriteFile(p, []byte(strings.Repeat("not a database\n", 400)), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, false, func(err error) bool { return errors.Is(err, ErrNotKandevDatabase) }},
		{"SQLite but not kandev", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "other.db")
			rawExec(t, p, `CREATE TABLE things (id INTEGER PRIMARY KEY)`)
			return p
		}, false, func(err error) bool { return errors.Is(err, ErrNotKandevDatabase) }},
		{"fails the integrity check", func(t *testing.T) string {
			p := copyFile(t, good)
			corruptTasksPage(t, p)
			return p
		}, false, func(err error) bool { return err != nil && strings.Contains(err.Error(), "integrity check failed") }},
		{"newer schema", func(t *testing.T) string {
			p := copyFile(t, good)
			rawExec(t, p, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future.sql', '')`, LatestVersion()+1)
			return p
		}, false, func(err error) bool {
			var ne *NewerSchemaError
			return errors.As(err, &ne) && ne.Database == LatestVersion()+1 && ne.Binary == LatestVersion()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			from := tc.from(t)
			target := filepath.Join(t.TempDir(), "data")
			if tc.nonEmpty {
				if err := os.MkdirAll(target, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(target, "token"), []byte("operator"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			was, srcWas := dirState(t, target), dirState(t, filepath.Dir(from))
			_, err := RestoreSQLite(t.Context(), from, target)
			if !tc.want(err) {
				t.Fatalf("restore: got error %v, want the %s refusal", err, tc.name)
			}
			sameState(t, "target", dirState(t, target), was)
			sameState(t, "backup dir", dirState(t, filepath.Dir(from)), srcWas)
		})
	}
}

// TestRestoreIntoEmptyDir: an existing empty data dir is accepted and the
// restored database opens at the backup's schema version.
func TestRestoreIntoEmptyDir(t *testing.T) {
	t.Parallel()
	target := t.TempDir()
	info, err := RestoreSQLite(t.Context(), backupOf(t), target)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if info.SchemaVersion != LatestVersion() || info.Path != filepath.Join(target, DatabaseFile) {
		t.Fatalf("restore info: got %+v, want %s at version %d", info, filepath.Join(target, DatabaseFile), LatestVersion())
	}
	es, _ := os.ReadDir(target)
	if len(es) != 1 {
		t.Fatalf("data dir: got %d entries, want only %s (no temporary file left)", len(es), DatabaseFile)
	}
	s := must(Open(t.Context(), target))(t)
	defer func() { _ = s.Close() }()
	var n int
	if err := s.DB().QueryRow(`SELECT COUNT(*) FROM tasks`).Scan(&n); err != nil || n < 20 {
		t.Fatalf("restored tasks: got %d (%v), want at least 20", n, err)
	}
}

// TestOpenNewerSQLiteSchemaWritesNothing: a database whose schema is newer
// than this binary's is refused at open with both versions named, and the
// data dir is byte for byte as it was (no -wal or -shm file created, the
// database's bytes and modification time unchanged, still in rollback
// journal mode).
func TestOpenNewerSQLiteSchemaWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := must(Open(t.Context(), dir))(t)
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	future := LatestVersion() + 1
	// In rollback-journal mode, as a restored backup is: opening it for
	// serving would switch it to WAL, a write to the file's header.
	rawExec(t, filepath.Join(dir, DatabaseFile), `PRAGMA journal_mode=DELETE`)
	rawExec(t, filepath.Join(dir, DatabaseFile), `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future.sql', '')`, future)
	was := dirState(t, dir)
	if len(was) != 1 {
		t.Fatalf("data dir before: got %v, want only %s", was, DatabaseFile)
	}
	time.Sleep(10 * time.Millisecond) // a write would move the modification time
	s2, err := Open(t.Context(), dir)
	if err == nil {
		_ = s2.Close()
		t.Fatal("open: got nil error, want the newer-schema refusal")
	}
	var ne *NewerSchemaError
	if !errors.As(err, &ne) || ne.Database != future || ne.Binary != LatestVersion() {
		t.Fatalf("open: got %v, want a NewerSchemaError %d > %d", err, future, LatestVersion())
	}
	for _, v := range []int{future, LatestVersion()} {
		if !strings.Contains(err.Error(), strconv.Itoa(v)) {
			t.Fatalf("message: got %q, want it to name version %d", err, v)
		}
	}
	sameState(t, "data dir", dirState(t, dir), was)
	if v, _, err := SQLiteSchemaVersion(t.Context(), filepath.Join(dir, DatabaseFile)); err != nil || v != future {
		t.Fatalf("schema version: got %d (%v), want %d", v, err, future)
	}
	sameState(t, "data dir after reading the version", dirState(t, dir), was)
}

// copyFile copies path into a new temporary directory.
func copyFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}
