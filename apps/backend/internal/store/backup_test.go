package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// loadWriter creates tasks on b one after another until stopped, recording
// the id of each acknowledged (committed and returned) write in order.
type loadWriter struct {
	mu    sync.Mutex
	acked []string
	stop  chan struct{}
	done  chan error
}

func startWriter(s *Store, b board) *loadWriter {
	w := &loadWriter{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				w.done <- nil
				return
			default:
			}
			task, _, err := s.CreateTask(context.Background(), kanban.TaskCreate{
				WorkspaceID: b.ws.ID, Title: fmt.Sprintf("load %d", i)})
			if err != nil {
				w.done <- err
				return
			}
			w.mu.Lock()
			w.acked = append(w.acked, task.ID)
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *loadWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// waitFor waits (at most 30 s) until the loadWriter has n acknowledged writes.
func (w *loadWriter) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for w.count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("writer: got %d acknowledged writes in 30s, want %d", w.count(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// taskIDs returns the ids of workspace ws's tasks in db.
func taskIDs(t *testing.T, db *sql.DB, ws string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT id FROM tasks WHERE workspace_id = ?`, ws)
	if err != nil {
		t.Fatalf("list task ids: %v", err)
	}
	defer func() { _ = rows.Close() }()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatalf("scan: %v", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	return ids
}

// idChecksum is a SHA-256 over the sorted ids.
func idChecksum(ids []string) string {
	ids = slices.Sorted(slices.Values(ids))
	h := sha256.New()
	for _, id := range ids {
		_, _ = fmt.Fprintln(h, id)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestBackupUnderWriteLoadRestoresAcknowledgedWrites takes a backup while
// a goroutine keeps creating tasks through the store, restores it into an
// empty data dir and opens it: the restored board holds exactly the first
// k acknowledged writes, with k at least the writes acknowledged before
// the backup began (row count and a checksum over the ids agree).
func TestBackupUnderWriteLoadRestoresAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s := must(Open(ctx, dir))(t)
	t.Cleanup(func() { _ = s.Close() })
	b := newBoard(t, s, "Backups")
	w := startWriter(s, b)
	w.waitFor(t, 500)
	before := w.count()
	out := filepath.Join(t.TempDir(), "kandev-backup.db")
	info, err := BackupSQLite(ctx, filepath.Join(dir, DatabaseFile), out)
	after := w.count()
	if err == nil {
		w.waitFor(t, after+20) // the loadWriter went on past the backup
	}
	close(w.stop)
	if werr := <-w.done; werr != nil {
		t.Fatalf("writer: %v", werr)
	}
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if info.SchemaVersion != LatestVersion() || info.Bytes <= 0 {
		t.Fatalf("backup info: got %+v, want schema version %d and a size", info, LatestVersion())
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := RestoreSQLite(ctx, out, restored); err != nil {
		t.Fatalf("restore: %v", err)
	}
	r := must(Open(ctx, restored))(t)
	t.Cleanup(func() { _ = r.Close() })
	got := taskIDs(t, r.DB(), b.ws.ID)
	k := len(got)
	t.Logf("acknowledged before the backup %d, after it %d; backup holds %d (%d bytes)", before, after, k, info.Bytes)
	if k < before || k > after+1 {
		t.Fatalf("restored tasks: got %d, want between %d (acknowledged before the backup) and %d", k, before, after+1)
	}
	w.mu.Lock()
	want := slices.Clone(w.acked[:k])
	w.mu.Unlock()
	if g, wt := idChecksum(got), idChecksum(want); g != wt {
		t.Fatalf("restored ids checksum: got %s, want %s (the first %d acknowledged writes)", g, wt, k)
	}
}

// dirState is the names, sizes, modification times and content hashes of
// dir's files (nil when dir does not exist).
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatalf("read dir: %v", err)
	}
	out := map[string]string{}
	for _, e := range es {
		fi, err := e.Info()
		if err != nil {
			t.Fatalf("stat: %v", err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = fmt.Sprintf("%d %s %x", fi.Size(), fi.ModTime().Format(time.RFC3339Nano), sha256.Sum256(b))
	}
	return out
}

func sameState(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v unchanged", what, got, want)
	}
}

// TestBackupRefusesExistingOut: an existing --out file is never replaced,
// and no temporary copy is left beside it.
func TestBackupRefusesExistingOut(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s := must(Open(ctx, dir))(t)
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	outDir := t.TempDir()
	out := filepath.Join(outDir, "taken.db")
	if err := os.WriteFile(out, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	was := dirState(t, outDir)
	if _, err := BackupSQLite(ctx, filepath.Join(dir, DatabaseFile), out); !errors.Is(err, ErrExists) {
		t.Fatalf("backup onto an existing file: got %v, want ErrExists", err)
	}
	sameState(t, "output dir", dirState(t, outDir), was)
}

// backupOf takes a backup of a fresh data dir holding one board.
func backupOf(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	s := must(Open(ctx, dir))(t)
	b := newBoard(t, s, "Corruptible")
	for i := range 20 {
		mustTask(t, s, b, "", fmt.Sprintf("task %d", i))
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	out := filepath.Join(t.TempDir(), "backup.db")
	if _, err := BackupSQLite(ctx, filepath.Join(dir, DatabaseFile), out); err != nil {
		t.Fatalf("backup: %v", err)
	}
	return out
}

// rawExec runs stmt on the SQLite file path through a plain connection.
func rawExec(t *testing.T, path, stmt string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Exec(stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// corruptTasksPage overwrites the page header of the tasks table's root
// page in the SQLite file path.
func corruptTasksPage(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int64
	err = db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'tasks'`).Scan(&root)
	if err == nil {
		err = db.QueryRow(`PRAGMA page_size`).Scan(&pageSize)
	}
	_ = db.Close()
	if err != nil {
		t.Fatalf("find the tasks page: %v", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, (root-1)*pageSize); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
