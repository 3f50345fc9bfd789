package app

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// runCLI runs the kandev binary with args (bounded by 60 s) and returns
// its stdout, its stderr and whether it exited 0.
func runCLI(t *testing.T, env []string, args ...string) (string, string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kandevBinary(t), args...) //nolint:gosec // G204: the binary under test
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err == nil
}

// startServeProcess starts kandev serve on data and returns its address; it is
// stopped when t ends.
func startServeProcess(t *testing.T, env []string, data string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	// No rate limits: the backup tests' writer writes as fast as it can.
	serve := exec.CommandContext(ctx, kandevBinary(t), "serve", "--addr", "127.0.0.1:0", "--data-dir", data, "--launch-agents=false", //nolint:gosec // G204: the binary under test
		"--rate-calls=0", "--rate-writes=0")
	serve.Env = env
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		_ = serve.Wait()
		cancel()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`serving on http://(127\.0\.0\.1:\d+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("kandev serve: no banner within 30s")
	}
	return ""
}

// workspaceIDs returns the ids of the workspaces named load-* in the
// SQLite database file path.
func workspaceIDs(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	rows, err := db.Query(`SELECT id FROM workspaces WHERE name LIKE 'load-%'`)
	if err != nil {
		t.Fatalf("list workspaces: %v", err)
	}
	defer func() { _ = rows.Close() }()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func checksum(ids []string) string {
	h := sha256.New()
	for _, id := range slices.Sorted(slices.Values(ids)) {
		_, _ = fmt.Fprintln(h, id)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// operatorWriter creates workspaces through a backend's operator API one
// after another until stopped, recording each acknowledged id in order.
type operatorWriter struct {
	mu    sync.Mutex
	acked []string
	stop  chan struct{}
	done  chan error
}

func startOperatorWriter(url, tok string) *operatorWriter {
	w := &operatorWriter{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				w.done <- nil
				return
			default:
			}
			var ws kanban.Workspace
			if err := Operator(context.Background(), url, tok, kanban.ActionWorkspaceCreate,
				action.WorkspaceCreateIn{Name: "load-" + strconv.Itoa(i)}, &ws); err != nil {
				w.done <- err
				return
			}
			w.mu.Lock()
			w.acked = append(w.acked, ws.ID)
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *operatorWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// TestBackupOfServingBackendRestores: kandev backup, run as its own
// process against the data dir of a kandev serve that an operator client
// keeps writing to, makes a file that kandev restore puts into an empty
// data dir; the restored database holds exactly the first k acknowledged
// writes, k at least those acknowledged before the backup began. A second
// backup onto the same file and a second restore into the now non-empty
// data dir are refused, changing nothing.
func TestBackupOfServingBackendRestores(t *testing.T) {
	t.Parallel()
	home, data := t.TempDir(), t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	url := startServeProcess(t, env, data)
	tok, err := os.ReadFile(filepath.Join(data, TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	w := startOperatorWriter(url, strings.TrimSpace(string(tok)))
	for deadline := time.Now().Add(30 * time.Second); w.count() < 50 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	out := filepath.Join(t.TempDir(), "kandev.backup")
	before := w.count()
	stdout, stderr, ok := runCLI(t, env, "backup", "--data-dir", data, "--out", out)
	after := w.count()
	close(w.stop)
	if err := <-w.done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if !ok || !strings.Contains(stdout, "schema version "+strconv.Itoa(store.LatestVersion())) {
		t.Fatalf("kandev backup: got %q %q, want success naming schema version %d", stdout, stderr, store.LatestVersion())
	}
	if _, stderr, ok := runCLI(t, env, "backup", "--data-dir", data, "--out", out); ok || !strings.Contains(stderr, "already exists") {
		t.Fatalf("second backup onto the same file: got ok=%v %q, want the refusal", ok, stderr)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if stdout, stderr, ok := runCLI(t, env, "restore", "--from", out, "--data-dir", restored); !ok {
		t.Fatalf("kandev restore: %q %q", stdout, stderr)
	}
	got := workspaceIDs(t, filepath.Join(restored, store.DatabaseFile))
	k := len(got)
	t.Logf("acknowledged before the backup %d, after it %d; the backup holds %d", before, after, k)
	if k < before || k > after+1 {
		t.Fatalf("restored workspaces: got %d, want between %d and %d", k, before, after+1)
	}
	w.mu.Lock()
	want := slices.Clone(w.acked[:k])
	w.mu.Unlock()
	if checksum(got) != checksum(want) {
		t.Fatalf("restored ids checksum: got %s, want %s (the first %d acknowledged writes)", checksum(got), checksum(want), k)
	}
	was := dirFiles(t, restored)
	if _, stderr, ok := runCLI(t, env, "restore", "--from", out, "--data-dir", restored); ok || !strings.Contains(stderr, "not empty") {
		t.Fatalf("restore into a non-empty data dir: got ok=%v %q, want the refusal", ok, stderr)
	}
	if now := dirFiles(t, restored); now != was {
		t.Fatalf("data dir after the refused restore: got %s, want %s", now, was)
	}
}

// dirFiles describes dir's files: names, sizes, modification times and
// content hashes.
func dirFiles(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	var b strings.Builder
	for _, e := range es {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %d %s %x\n", e.Name(), fi.Size(), fi.ModTime().Format(time.RFC3339Nano), sha256.Sum256(data))
	}
	return b.String()
}

// TestServeRefusesNewerSchema: kandev serve on a data dir whose database
// has a newer schema exits with a message naming both versions and
// writes nothing (the data dir, a restored backup in rollback-journal
// mode, is byte for byte as it was); kandev version reports both
// versions and the refusal.
func TestServeRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	home, src := t.TempDir(), t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	st, err := store.Open(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "b.db")
	if _, err := store.BackupSQLite(t.Context(), filepath.Join(src, store.DatabaseFile), backup); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	if _, err := store.RestoreSQLite(t.Context(), backup, data); err != nil {
		t.Fatal(err)
	}
	latest, future := store.LatestVersion(), store.LatestVersion()+1
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, store.DatabaseFile))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future.sql', '')`, future)
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatalf("insert the future version: %v %v", err, cerr)
	}
	was := dirFiles(t, data)
	time.Sleep(10 * time.Millisecond) // a write would move a modification time
	stdout, stderr, ok := runCLI(t, env, "serve", "--addr", "127.0.0.1:0", "--data-dir", data, "--launch-agents=false")
	want := fmt.Sprintf("database schema version %d is newer than this binary's schema version %d", future, latest)
	if ok || !strings.Contains(stderr, want) {
		t.Fatalf("kandev serve: got ok=%v stdout %q stderr %q, want it to exit with %q", ok, stdout, stderr, want)
	}
	if now := dirFiles(t, data); now != was {
		t.Fatalf("data dir after the refusal: got %s, want %s", now, was)
	}
	stdout, _, ok = runCLI(t, env, "version", "--data-dir", data)
	for _, line := range []string{fmt.Sprintf("schema version %d (this binary)", latest),
		fmt.Sprintf("database schema version %d (%s) — newer than this binary", future, filepath.Join(data, store.DatabaseFile))} {
		if !ok || !strings.Contains(stdout, line) {
			t.Fatalf("kandev version: got ok=%v %q, want a line %q", ok, stdout, line)
		}
	}
	if now := dirFiles(t, data); now != was {
		t.Fatalf("data dir after kandev version: got %s, want %s", now, was)
	}
	if _, stderr, ok := runCLI(t, env, "backup", "--database", "postgres://u:secret@db.invalid/k", "--out", filepath.Join(home, "x")); ok ||
		!strings.Contains(stderr, "pg_dump --format=custom") || strings.Contains(stderr, "secret") {
		t.Fatalf("kandev backup on PostgreSQL: got ok=%v %q, want the pg_dump advice without the URL", ok, stderr)
	}
}
