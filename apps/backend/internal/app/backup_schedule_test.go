package app

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// lockedBuffer is a log sink safe for the scheduler's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runSchedule runs a scheduler of src every 25 ms until it has reported
// n backups, and returns their errors.
func runSchedule(t *testing.T, src, dir string, keep, n int, log *slog.Logger) []error {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var errs []error
	enough := make(chan struct{})
	bs := &backupScheduler{sched: BackupSchedule{Every: 25 * time.Millisecond, Dir: dir, Keep: keep}, src: src, log: log,
		taken: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			if len(errs) == n {
				return // one in flight when the test stopped the schedule
			}
			if errs = append(errs, err); len(errs) == n {
				close(enough)
			}
		}}
	done := make(chan struct{})
	go func() { defer close(done); bs.run(ctx) }()
	select {
	case <-enough:
	case <-time.After(60 * time.Second):
		t.Fatalf("scheduler: fewer than %d backups in 60s", n)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(errs)
}

// TestScheduledBackupsKeepExactlyN: after more backups than --backup-keep
// the backup dir holds exactly keep of the scheduler's files, the
// newest, each a checked kandev database; files it did not make (even
// ones named like its own) are left alone.
func TestScheduledBackupsKeepExactlyN(t *testing.T) {
	t.Parallel()
	data, dir := t.TempDir(), t.TempDir()
	st, err := store.Open(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	foreign := []string{"kandev-backup-notes.txt", "mine.db", "kandev-backup-20260101T000000Z.db"}
	for _, f := range foreign {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("not ours"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const keep, taken = 3, 7
	var log lockedBuffer
	errs := runSchedule(t, filepath.Join(data, store.DatabaseFile), dir, keep, taken, slog.New(slog.NewTextHandler(&log, nil)))
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("scheduled backups: %v", err)
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ours, others []string
	for _, e := range es {
		if backupName.MatchString(e.Name()) {
			ours = append(ours, e.Name())
		} else {
			others = append(others, e.Name())
		}
	}
	if len(ours) != keep {
		t.Fatalf("scheduled backups kept: got %d %v, want exactly %d", len(ours), ours, keep)
	}
	if slices.Sort(foreign); !slices.Equal(others, foreign) {
		t.Fatalf("other files: got %v, want %v untouched", others, foreign)
	}
	for _, f := range ours {
		if _, err := store.VerifySQLite(t.Context(), filepath.Join(dir, f)); err != nil {
			t.Fatalf("kept backup %s: %v", f, err)
		}
	}
	// One more backup may have finished as the test stopped the schedule.
	made := strings.Count(log.String(), `msg="scheduled backup" `)
	if n := strings.Count(log.String(), "removed an old backup"); made < taken || n != made-keep {
		t.Fatalf("removals logged: got %d of %d backups, want %d (at least %d backups)", n, made, made-keep, taken)
	}
}

// TestScheduledBackupFailureIsLogged: a backup that fails (here: no
// database) is logged and the schedule goes on.
func TestScheduledBackupFailureIsLogged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var log lockedBuffer
	errs := runSchedule(t, filepath.Join(t.TempDir(), store.DatabaseFile), dir, 2, 2, slog.New(slog.NewTextHandler(&log, nil)))
	for _, err := range errs {
		if err == nil {
			t.Fatal("backup of a missing database: got nil error, want a failure")
		}
	}
	if n := strings.Count(log.String(), "scheduled backup failed"); n != 2 {
		t.Fatalf("failures logged: got %d in %q, want 2", n, log.String())
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Fatalf("backup dir: got %d files, want none", len(es))
	}
}

// TestBackupScheduleBounds: serve's --backup-* flags are bounded, and
// refused with PostgreSQL.
func TestBackupScheduleBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		s        BackupSchedule
		database string
		ok       bool
	}{
		{"off", BackupSchedule{}, "", true},
		{"off with postgres", BackupSchedule{}, "postgres://h/db", true},
		{"hourly", BackupSchedule{Every: time.Hour, Keep: 7}, "", true},
		{"at the lower bound", BackupSchedule{Every: minBackupEvery, Keep: 1}, "", true},
		{"under the lower bound", BackupSchedule{Every: minBackupEvery - time.Second, Keep: 1}, "", false},
		{"over the upper bound", BackupSchedule{Every: maxBackupEvery + time.Second, Keep: 1}, "", false},
		{"keep zero", BackupSchedule{Every: time.Hour, Keep: 0}, "", false},
		{"keep over the bound", BackupSchedule{Every: time.Hour, Keep: maxBackupKeep + 1}, "", false},
		{"with postgres", BackupSchedule{Every: time.Hour, Keep: 7}, "postgres://h/db", false},
	}
	for _, tc := range tests {
		if err := tc.s.validate(tc.database); (err == nil) != tc.ok {
			t.Errorf("%s: got %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// TestServeTakesScheduledBackups: a backend started with a backup
// schedule (here shorter than the flag allows) takes backups of its own
// database while it serves, keeps --backup-keep of them, and stops the
// schedule with its lifetime.
func TestServeTakesScheduledBackups(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "backups")
	e := newEnvWith(t, func(c *Config) { c.Backup = BackupSchedule{Every: 50 * time.Millisecond, Dir: dir, Keep: 2} })
	e.newTask("Backed up")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(e.logs.String(), "removed an old backup") {
		if time.Now().After(deadline) {
			t.Fatalf("no backup removed by retention within 30s; logs:\n%s", e.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.close()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 {
		t.Fatalf("backup dir after stop: got %d files, want 2 (--backup-keep)", len(es))
	}
	for _, f := range es {
		if _, err := store.VerifySQLite(t.Context(), filepath.Join(dir, f.Name())); err != nil || !backupName.MatchString(f.Name()) {
			t.Fatalf("backup %s: %v", f.Name(), err)
		}
	}
}
