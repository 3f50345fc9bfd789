//go:build unix

package fsguard

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// workspace is a task folder under the layout's data dir, checked, with a
// few files.
func workspace(t testing.TB, l layout, p *Policy) (string, Dir) {
	t.Helper()
	dir := filepath.Join(l.data, "tasks", "t1")
	mkdir(t, filepath.Join(dir, "sub"))
	write(t, filepath.Join(dir, "a.txt"), "hello")
	write(t, filepath.Join(dir, "sub", "b.txt"), strings.Repeat("b", 100))
	write(t, filepath.Join(l.outside, "secret.txt"), "OUTSIDE-SECRET")
	d, err := p.KandevDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, d
}

// plantWaysOut makes, in the workspace dir, the links, FIFOs and socket
// readRefusals names.
func plantWaysOut(t *testing.T, l layout, dir string) {
	t.Helper()
	symlink(t, "a.txt", filepath.Join(dir, "inside-link"))
	symlink(t, "sub", filepath.Join(dir, "subdir"))
	symlink(t, "../../"+filepath.Base(l.token), filepath.Join(dir, "token-link"))
	symlink(t, "../..", filepath.Join(dir, "up"))
	symlink(t, l.outside, filepath.Join(dir, "out"))
	symlink(t, "/dev/zero", filepath.Join(dir, "zero"))
	if err := os.Link(l.token, filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifodir"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sock.Close() })
}

// readRefusals are the workspace paths ReadFile refuses (after
// plantWaysOut), with the code and the message's start after the field.
var readRefusals = []struct {
	rel  string
	code kanban.Code
	want string
}{
	{"", kanban.CodeValidation, "must be a path relative to the task's workspace"},
	{"/etc/passwd", kanban.CodeValidation, "must be a path relative to the task's workspace"},
	{"a\x00b", kanban.CodeValidation, "must be a path relative to the task's workspace"},
	{"../secret.txt", kanban.CodeValidation, "must stay inside the task's workspace"},
	{"sub/../../x", kanban.CodeValidation, "must stay inside the task's workspace"},
	{".", kanban.CodeValidation, "must name a regular file"},
	{"sub", kanban.CodeValidation, "must name a regular file"},
	{"inside-link", kanban.CodeValidation, "is a symbolic link"},
	{"token-link", kanban.CodeValidation, "is a symbolic link"},
	{"zero", kanban.CodeValidation, "is a symbolic link"},
	{"up/token", kanban.CodeValidation, "must stay inside the task's workspace"},
	{"out/secret.txt", kanban.CodeValidation, "must stay inside the task's workspace"},
	{"hard", kanban.CodeValidation, "has other hard links"},
	{"fifo", kanban.CodeValidation, "must name a regular file"},
	{"fifodir/x", kanban.CodeNotFound, "no such file"},
	{"sock", kanban.CodeValidation, "must name a regular file"},
	{"missing.txt", kanban.CodeNotFound, "no such file in the task's workspace"},
	{"missing/x.txt", kanban.CodeNotFound, "no such file in the task's workspace"},
	{"a.txt/x", kanban.CodeNotFound, "no such file in the task's workspace"},
}

// TestReadFile: what a tool may read of a workspace, and every way out of
// it refused with the rule, never the path.
func TestReadFile(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	p := l.policy(t)
	dir, d := workspace(t, l, p)
	plantWaysOut(t, l, dir)

	ctx := context.Background()
	for _, tc := range []struct {
		rel, want string
		size      int64
	}{{"a.txt", "hello", 5}, {"./sub/../a.txt", "hello", 5}, {"subdir/b.txt", strings.Repeat("b", 10), 100}} {
		f, err := p.ReadFile(ctx, d, tc.rel, "path", 10)
		if err != nil || string(f.Head) != tc.want || f.Size != tc.size {
			t.Errorf("%s: got %+v, %v, want %q of %d bytes", tc.rel, f, err, tc.want, tc.size)
		}
	}
	for _, tc := range readRefusals {
		f, err := p.ReadFile(ctx, d, tc.rel, "blocks[0].path", 1<<10)
		e, ok := kanban.AsError(err)
		if !ok || e.Code != tc.code || !strings.HasPrefix(e.Message, "blocks[0].path: "+tc.want) {
			t.Errorf("%q: got %+v, %v, want %s %q", tc.rel, f, err, tc.code, tc.want)
		}
	}

	// The token moved into the workspace keeps its identity.
	if err := os.Remove(filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(dir, "moved")
	if err := os.Rename(l.token, moved); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ReadFile(ctx, d, "moved", "path", 1<<10); err == nil || !strings.Contains(err.Error(), "is a file Kandev protects") {
		t.Errorf("the token moved in: got %v, want refused", err)
	}
	if err := os.Rename(moved, l.token); err != nil {
		t.Fatal(err)
	}

	// A cancelled request reads nothing.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.ReadFile(cancelled, d, "a.txt", "path", 10); kanban.ErrorCode(err) != kanban.CodeUnavailable {
		t.Errorf("cancelled: got %v, want UNAVAILABLE", err)
	}
}

// TestReadFileLeavesNoGoroutine: refused FIFOs and sockets hold nothing:
// the goroutine count is what it was. Not parallel: it counts them.
func TestReadFileLeavesNoGoroutine(t *testing.T) {
	l := newLayout(t)
	p := l.policy(t)
	dir, d := workspace(t, l, p)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	for range 100 {
		if _, err := p.ReadFile(context.Background(), d, "fifo", "path", 1<<10); err == nil {
			t.Fatal("a FIFO was read")
		}
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("goroutines: got %d after 100 refused FIFO reads, want at most %d", after, before)
	}
}

// BenchmarkReadFile is one rich output file block's read: a 4 KiB file two
// directories down in a task folder.
func BenchmarkReadFile(b *testing.B) {
	l := newLayout(b)
	p := l.policy(b)
	dir, d := workspace(b, l, p)
	mkdir(b, filepath.Join(dir, "x", "y"))
	write(b, filepath.Join(dir, "x", "y", "f.txt"), strings.Repeat("a", 4<<10))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.ReadFile(ctx, d, "x/y/f.txt", "path", 64<<10); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFileUnguarded is the same read with os.Open and
// io.ReadAll, as rich output read before the policy: the guard's price.
func BenchmarkReadFileUnguarded(b *testing.B) {
	dir := b.TempDir()
	mkdir(b, filepath.Join(dir, "x", "y"))
	path := filepath.Join(dir, "x", "y", "f.txt")
	write(b, path, strings.Repeat("a", 4<<10))
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadAll(io.LimitReader(f, 64<<10)); err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
	}
}
