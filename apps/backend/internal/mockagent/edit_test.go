//go:build linux

package mockagent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// lastTool returns the last finished tool call's status and raw output.
func (c *acpClient) lastTool() (acp.ToolCallStatus, map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.tools) == 0 {
		return "", nil
	}
	u := c.tools[len(c.tools)-1]
	out, _ := u.RawOutput.(map[string]any)
	return *u.Status, out
}

// TestWriteDirective: @write makes parent directories, turns escapes into
// characters and overwrites; a path that is absolute, has "..", is in
// .git, or leads out through a symbolic link is refused, saying so, and
// nothing outside the directory is touched; so is text over the bound.
func TestWriteDirective(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	conn, c, ns := connectIn(t, Options{}, dir)
	prompt(t, conn, ns.SessionId, `@write src/deep/login.go package login\n\nfunc Login() {\n\treturn\n} // a \\n stays`)
	b, err := os.ReadFile(filepath.Join(dir, "src", "deep", "login.go"))
	if err != nil || string(b) != "package login\n\nfunc Login() {\n\treturn\n} // a \\n stays" {
		t.Fatalf("wrote %q, %v", b, err)
	}
	if st, _ := c.lastTool(); st != acp.ToolCallStatusCompleted || c.said() != "" {
		t.Fatalf("status %q, said %q", st, c.said())
	}
	prompt(t, conn, ns.SessionId, "@write src/deep/login.go v2")
	if b, _ := os.ReadFile(filepath.Join(dir, "src", "deep", "login.go")); string(b) != "v2" {
		t.Fatalf("overwrite: %q", b)
	}
	prompt(t, conn, ns.SessionId, "@write empty.txt")
	if st, err := os.Stat(filepath.Join(dir, "empty.txt")); err != nil || st.Size() != 0 {
		t.Fatalf("an empty write: %v", err)
	}

	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c2 := range []struct{ line, want string }{
		{"@write " + secret + " x", "must be relative"},
		{"@write ../escape.txt x", `".."`},
		{"@write src/../../escape.txt x", `".."`},
		{"@write ./a.txt x", `"."`},
		{"@write a//b.txt x", "empty"},
		{`@write a\b.txt x`, "backslashes"},
		{"@write .git/hooks/pre-commit x", ".git"},
		{"@write out/planted.txt x", "leads out of the working directory"},
		{"@write link.txt overwritten", "leads out of the working directory"},
		{"@write", "needs a path"},
		{"@write big.txt " + strings.Repeat("x", MaxWriteBytes+1), "larger than"},
	} {
		prompt(t, conn, ns.SessionId, c2.line)
		if got := c.said(); !strings.Contains(got, c2.want) || !strings.HasPrefix(got, "mock agent: @write") {
			t.Errorf("%.60s: said %q, want a refusal naming %s", c2.line, got, c2.want)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "keep" {
		t.Fatalf("the file outside was changed: %q", b)
	}
	for _, p := range []string{filepath.Join(outside, "planted.txt"), filepath.Join(filepath.Dir(dir), "escape.txt"), filepath.Join(dir, "big.txt"),
		filepath.Join(dir, ".git", "hooks")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s exists after a refused write", p)
		}
	}
}

// TestShDirective: @sh runs sh -c in the working directory; its exit
// status and output are reported, the output bounded; past the time
// bound its whole process group is killed; a cancelled turn kills it too.
func TestShDirective(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conn, c, ns := connectIn(t, Options{ShTimeout: time.Second}, dir)
	prompt(t, conn, ns.SessionId, `@sh pwd; echo made > made.txt; echo to-stderr >&2`)
	st, out := c.lastTool()
	real, _ := filepath.EvalSymlinks(dir)
	if st != acp.ToolCallStatusCompleted || out["exit_code"] != float64(0) || !strings.Contains(out["output"].(string), real) ||
		!strings.Contains(out["output"].(string), "to-stderr") {
		t.Fatalf("status %q, output %v", st, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(b) != "made\n" {
		t.Fatalf("made.txt: %q, %v", b, err)
	}
	prompt(t, conn, ns.SessionId, "@sh exit 3")
	if st, out := c.lastTool(); st != acp.ToolCallStatusFailed || out["exit_code"] != float64(3) || !strings.Contains(c.said(), "status 3") {
		t.Fatalf("exit 3: status %q, output %v", st, out)
	}
	prompt(t, conn, ns.SessionId, "@sh head -c 1000000 /dev/zero | tr '\\0' x")
	_, out = c.lastTool()
	if o := out["output"].(string); len(o) > MaxShOutput+100 || !strings.Contains(o, "934464 more bytes of output dropped") {
		t.Fatalf("a flood: %d bytes reported, tail %q", len(o), o[max(0, len(o)-80):])
	}

	// Past the bound: the command and what it started are killed.
	start := time.Now()
	prompt(t, conn, ns.SessionId, "@sh sleep 300 & echo $! > child.pid; wait")
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the bound did not hold: %v", d)
	}
	if got := c.said(); !strings.Contains(got, "ran longer than 1s: its process group was killed") {
		t.Fatalf("said %q", got)
	}
	gone(t, filepath.Join(dir, "child.pid"))

	// A cancelled turn kills it too.
	conn2, _, ns2 := connectIn(t, Options{ShTimeout: time.Hour}, dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan acp.StopReason, 1)
	go func() {
		resp, _ := conn2.Prompt(ctx, acp.PromptRequest{SessionId: ns2.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("@sh sleep 300 & echo $! > child2.pid; wait")}})
		done <- resp.StopReason
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, "child2.pid")); err == nil && len(b) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if err := conn2.Cancel(context.Background(), acp.CancelNotification{SessionId: ns2.SessionId}); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a cancelled turn's command kept it running")
	}
	gone(t, filepath.Join(dir, "child2.pid"))
}

// gone waits until the process whose pid is in file has ended: no longer
// there, or a zombie (killed, waiting for its new parent to reap it).
func gone(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		// pid (comm) STATE ...: the state follows the last ")".
		if i := strings.LastIndexByte(string(stat), ')'); err == nil && i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			return
		}
	}
	t.Fatalf("process %d (the command's background child) still runs", pid)
}
