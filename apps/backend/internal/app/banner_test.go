package app

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeBannerNamesTheCLI: kandev serve's banner says where it listens,
// where the token is, how to open the board, and names its own binary for
// the operator commands (make run puts nothing on PATH); the command it
// names prints the operator token from another directory, as a second
// terminal would run it.
func TestServeBannerNamesTheCLI(t *testing.T) {
	t.Parallel()
	bin := kandevBinary(t)
	home, data, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serve := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", data, "--launch-agents=false")
	serve.Env = env
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		_ = serve.Wait()
	}()
	lines := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var got []string
		for len(got) < 3 && sc.Scan() {
			got = append(got, sc.Text())
		}
		lines <- got
	}()
	var got []string
	select {
	case got = <-lines:
	case <-ctx.Done():
		t.Fatal("no banner within 30s")
	}
	if len(got) != 3 {
		t.Fatalf("banner: got %q, want three lines", got)
	}
	m := regexp.MustCompile(`^kandev \S+ serving on http://(127\.0\.0\.1:\d+) \(data dir (.+); operator token in (.+)\)$`).FindStringSubmatch(got[0])
	if m == nil || m[2] != data || m[3] != filepath.Join(data, TokenFile) {
		t.Fatalf("banner line 1: %q", got[0])
	}
	if want := "board: open http://" + m[1] + "/ and sign in with the operator token"; got[1] != want {
		t.Fatalf("banner line 2: got %q, want %q", got[1], want)
	}
	if want := "CLI: " + bin + " token prints the operator token; " + bin + " help lists every command"; got[2] != want {
		t.Fatalf("banner line 3: got %q, want %q", got[2], want)
	}
	// The command as the banner words it, from elsewhere, with no token
	// in the environment: the backend's registry record leads to it.
	cmd := strings.Fields(strings.TrimPrefix(strings.SplitN(got[2], " prints", 2)[0], "CLI: "))
	token := exec.CommandContext(ctx, cmd[0], append(cmd[1:], "--backend", "http://"+m[1])...) //nolint:gosec // G204: the binary under test
	token.Env, token.Dir = env, elsewhere
	out, err := token.CombinedOutput()
	want, rerr := os.ReadFile(filepath.Join(data, TokenFile))
	if err != nil || rerr != nil || strings.TrimSpace(string(out)) != strings.TrimSpace(string(want)) || len(want) == 0 {
		t.Fatalf("%v: %v (%v), want the data dir's token", cmd, err, rerr)
	}
}
