package app

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestHealthcheck: kandev healthcheck succeeds against a serving backend,
// also when given the unspecified listen address the container image
// serves on (asked on loopback), and fails, saying why, where nothing
// listens or the address or the timeout is bad.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	home, data := t.TempDir(), t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	hostport := strings.TrimPrefix(startServeProcess(t, env, data), "http://")
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{hostport, "0.0.0.0:" + port} {
		if stdout, stderr, ok := runCLI(t, env, "healthcheck", "--addr", addr); !ok || stdout != "ok\n" {
			t.Errorf("healthcheck --addr %s: got ok=%v %q %q, want ok", addr, ok, stdout, stderr)
		}
	}
	if stdout, _, ok := runCLI(t, append(env, "KANDEV_ADDR="+hostport), "healthcheck"); !ok || stdout != "ok\n" {
		t.Errorf("healthcheck with KANDEV_ADDR: got ok=%v %q, want ok", ok, stdout)
	}
	free := freeAddr(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", free}, "no answer"},
		{[]string{"--addr", "nowhere"}, "HOST:PORT"},
		{[]string{"--addr", hostport, "--timeout", "2m"}, "--timeout"},
	} {
		if _, stderr, ok := runCLI(t, env, append([]string{"healthcheck"}, c.args...)...); ok || !strings.Contains(stderr, c.want) {
			t.Errorf("healthcheck %v: got ok=%v %q, want a failure naming %q", c.args, ok, stderr, c.want)
		}
	}
}

// freeAddr is a loopback address nothing listens on (it was free a moment ago).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return a
}
