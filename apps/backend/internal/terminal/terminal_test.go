//go:build linux

package terminal

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// newManager is a Manager running /bin/sh, closed (and checked reaped)
// when the test ends.
func newManager(t *testing.T, cfg Config) *Manager {
	t.Helper()
	if cfg.Shell == "" {
		cfg.Shell = "/bin/sh"
	}
	if cfg.Env == nil {
		cfg.Env = Environ(os.Environ())
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return m
}

// reader collects a client's output.
type reader struct {
	t   *testing.T
	c   *Client
	buf bytes.Buffer
}

// until reads output until it contains want (bounded wait).
func (r *reader) until(want string) string {
	r.t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(r.buf.String(), want) {
		select {
		case b := <-r.c.Out:
			r.buf.Write(b)
		case <-deadline:
			r.t.Fatalf("output: got %q, want it to contain %q", r.buf.String(), want)
		}
	}
	return r.buf.String()
}

// alive reports whether pid is a live process: /proc has it and it is
// not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func waitDone(t *testing.T, s *Session) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the shell did not end")
	}
}

// TestShellRunsInTheTaskDirectory: what is typed runs in a shell in the
// task's directory and its output comes back.
func TestShellRunsInTheTaskDirectory(t *testing.T) {
	t.Parallel()
	m := newManager(t, Config{})
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	s, err := m.Open("t1", dir, 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	_, c := s.Attach()
	r := &reader{t: t, c: c}
	if err := s.Write([]byte("echo hello-$((6*7)); pwd; stty size\n")); err != nil {
		t.Fatal(err)
	}
	out := r.until("24 80")
	if !strings.Contains(out, "hello-42") || !strings.Contains(out, dir) {
		t.Fatalf("output: got %q, want hello-42 and the directory", out)
	}
	if err := s.Resize(100, 30); err != nil {
		t.Fatal(err)
	}
	_ = s.Write([]byte("stty size; exit 3\n"))
	r.until("30 100")
	waitDone(t, s)
	if s.ExitCode() != 3 || m.Count("") != 0 {
		t.Fatalf("exit: got code %d and %d open, want 3 and 0", s.ExitCode(), m.Count(""))
	}
}

// TestCloseTaskKillsTheProcessGroup: stopping a task kills its shell and
// what the shell started in the background; the other task's shell lives.
func TestCloseTaskKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	m := newManager(t, Config{})
	s, err := m.Open("t1", t.TempDir(), 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.Open("t2", t.TempDir(), 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	_, c := s.Attach()
	r := &reader{t: t, c: c}
	_ = s.Write([]byte("sleep 1000 & echo bg=$!.; echo bg-$((1+1))-end\n"))
	out := r.until("bg-2-end")
	m2 := regexp.MustCompile(`bg=(\d+)\.`).FindStringSubmatch(out)
	if m2 == nil {
		t.Fatalf("no pid in %q", out)
	}
	bg, err := strconv.Atoi(m2[1])
	if err != nil || !alive(bg) || !alive(s.PID()) {
		t.Fatalf("background job: got %q (%v), want a live pid", out, err)
	}
	if n := m.CloseTask("t1", "the task was stopped"); n != 1 {
		t.Fatalf("CloseTask: got %d killed, want 1", n)
	}
	waitDone(t, s)
	for deadline := time.Now().Add(5 * time.Second); alive(bg) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(s.PID()) || alive(bg) {
		t.Fatalf("after CloseTask: shell alive %v, background job alive %v, want both gone", alive(s.PID()), alive(bg))
	}
	if s.Reason() != "the task was stopped" || !alive(other.PID()) || m.Count("t2") != 1 {
		t.Fatalf("got reason %q, other shell alive %v, want the reason and the other task's shell untouched", s.Reason(), alive(other.PID()))
	}
}

// TestBounds: shells per task and in all are bounded; a bad size and an
// oversized input are refused.
func TestBounds(t *testing.T) {
	t.Parallel()
	m := newManager(t, Config{MaxPerTask: 2, MaxTotal: 3})
	for _, task := range []string{"a", "a", "b"} {
		if _, err := m.Open(task, t.TempDir(), 80, 24); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ task, want string }{{"a", "this task already has 2"}, {"c", "the backend already runs 3"}} {
		_, err := m.Open(c.task, t.TempDir(), 80, 24)
		if e, ok := kanban.AsError(err); !ok || e.Code != kanban.CodeConflict || !strings.Contains(e.Message, c.want) {
			t.Errorf("open %s: got %v, want CONFLICT %q", c.task, err, c.want)
		}
	}
	m2 := newManager(t, Config{})
	if _, err := m2.Open("a", t.TempDir(), 0, 24); kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Errorf("0 columns: got %v, want VALIDATION_ERROR", err)
	}
	s, err := m2.Open("a", t.TempDir(), MaxCols, MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(make([]byte, MaxInput+1)); kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Errorf("oversized input: got %v, want VALIDATION_ERROR", err)
	}
	if err := s.Resize(MaxCols+1, 10); kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Errorf("oversized resize: got %v, want VALIDATION_ERROR", err)
	}
}

// TestGraceAndIdle: a shell without a client ends after the grace
// period; one with a client ends once idle for the idle timeout; output
// beyond the backlog bound is dropped from the front.
func TestGraceAndIdle(t *testing.T) {
	t.Parallel()
	m := newManager(t, Config{Grace: 100 * time.Millisecond, IdleTimeout: time.Hour})
	s, err := m.Open("t", t.TempDir(), 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, s)
	if !strings.HasPrefix(s.Reason(), "no client for") || alive(s.PID()) {
		t.Fatalf("unattached: got reason %q, want ended for want of a client", s.Reason())
	}
	idle := newManager(t, Config{Grace: time.Hour, IdleTimeout: 200 * time.Millisecond, Backlog: 100})
	s, err = idle.Open("t", t.TempDir(), 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	_, c := s.Attach()
	r := &reader{t: t, c: c}
	_ = s.Write([]byte("i=0; while [ $i -lt 50 ]; do echo line-$i; i=$((i+1)); done; echo end-$((1+1))-mark\n"))
	r.until("end-2-mark")
	backlog, _ := s.Attach()
	if len(backlog) > 100 || !bytes.Contains(backlog, []byte("end-2-mark")) {
		t.Fatalf("backlog: got %d bytes %q, want at most 100 ending with the latest output", len(backlog), backlog)
	}
	waitDone(t, s)
	if !strings.HasPrefix(s.Reason(), "idle for") {
		t.Fatalf("idle: got reason %q, want idle", s.Reason())
	}
}

// TestCloseReapsEveryShell: the backend's shutdown kills and reaps every
// shell, and no shell opens after it.
func TestCloseReapsEveryShell(t *testing.T) {
	t.Parallel()
	m, err := New(Config{Shell: "/bin/sh", Env: Environ(nil)})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, task := range []string{"a", "b"} {
		s, err := m.Open(task, t.TempDir(), 80, 24)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, s.PID())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d alive after Close", pid)
		}
	}
	if _, err := m.Open("a", t.TempDir(), 80, 24); kanban.ErrorCode(err) != kanban.CodeUnavailable {
		t.Fatalf("open after Close: got %v, want UNAVAILABLE", err)
	}
}

// TestEnvironKeepsSecretsOut: the shell's environment is the allow-list
// only: no operator token, forge token or provider key reaches it.
func TestEnvironKeepsSecretsOut(t *testing.T) {
	t.Parallel()
	env := Environ([]string{"PATH=/usr/bin:/bin", "HOME=/home/op", "LC_ALL=C.UTF-8", "TERM=dumb", "KANDEV_TOKEN=op-secret",
		"GITHUB_TOKEN=gh-secret", "ANTHROPIC_API_KEY=sk-secret", "OPENAI_API_KEY=sk2", "AWS_SECRET_ACCESS_KEY=aws", "KANDEV_PATH=x"})
	m := newManager(t, Config{Env: env})
	s, err := m.Open("t", t.TempDir(), 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	_, c := s.Attach()
	r := &reader{t: t, c: c}
	_ = s.Write([]byte("env; echo env-$((1+1))-end\n"))
	out := r.until("env-2-end")
	for _, secret := range []string{"op-secret", "gh-secret", "sk-secret", "sk2", "aws", "KANDEV_"} {
		if strings.Contains(out, secret) {
			t.Errorf("the shell's environment holds %q", secret)
		}
	}
	for _, kept := range []string{"HOME=/home/op", "LC_ALL=C.UTF-8", "TERM=xterm-256color"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the shell's environment lacks %q", kept)
		}
	}
}
