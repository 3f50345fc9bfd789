package packaging

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// moduleRoot is apps/backend, the Go module.
func moduleRoot(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// run runs a command in dir with env added to the environment, bounded
// by limit, and returns its combined output; a failure fails t.
func run(t *testing.T, limit time.Duration, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(t, limit, dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(t *testing.T, limit time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	// Not ended with t's context: cleanups (removing containers and
	// images) run after it is cancelled.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// cleanup runs a command when t ends; its failure fails t.
func cleanup(t *testing.T, env []string, name string, args ...string) {
	t.Cleanup(func() {
		if out, err := runErr(t, time.Minute, "", env, name, args...); err != nil {
			t.Errorf("cleanup: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	})
}

// serve starts `BIN serve` on a free loopback port with its data dir in
// a temporary directory and returns its base URL; it is stopped (SIGTERM)
// when t ends.
func serve(t *testing.T, bin string, env []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(home, "data"), "--launch-agents=false")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		cancel()
	})
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`serving on (http://127\.0\.0\.1:\d+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("kandev serve did not report its address within 30s; stderr: %s", stderr.String())
		return ""
	}
}

// get fetches url and returns its status and (bounded) body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
