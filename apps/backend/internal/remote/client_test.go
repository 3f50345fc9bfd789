package remote_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/remote"
	"github.com/kandev/kandev/apps/backend/internal/sshtest"
)

// TestDialAndRun: a real sshd; the profile's key and known_hosts
// connect; a command runs (its failure carries its status and stderr,
// its context bounds it) and an upload lands 0600.
func TestDialAndRun(t *testing.T) {
	t.Parallel()
	s := sshtest.Require(t)
	ctx := t.Context()
	c, err := remote.Dial(ctx, s.SSHConfig(t.TempDir()), 0)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer func() { _ = c.Close() }()
	out, err := c.Run(ctx, "echo hello; echo oops >&2", nil, 1024)
	if err != nil || out != "hello\n" {
		t.Fatalf("run: got %q %v, want hello", out, err)
	}
	if _, err := c.Run(ctx, "echo why >&2; exit 3", nil, 1024); err == nil || !strings.Contains(err.Error(), "status 3: why") {
		t.Fatalf("failing command: got %v, want its status and stderr", err)
	}
	dst := filepath.Join(t.TempDir(), "up")
	if err := c.Upload(ctx, dst, "600", strings.NewReader("secret\n")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dst); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("uploaded file: %v %v, want mode 0600", st, err)
	}
	quick, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := c.Run(quick, "sleep 30", nil, 10); err == nil {
		t.Fatal("a command past its context's end: got no error")
	}

}

// TestRemoteForward: a remote-forwarded loopback port (ssh -R) of the
// host reaches a local listener, and no longer accepts once closed.
func TestRemoteForward(t *testing.T) {
	t.Parallel()
	s := sshtest.Require(t)
	ctx := t.Context()
	c, err := remote.Dial(ctx, s.SSHConfig(t.TempDir()), 0)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer func() { _ = c.Close() }()
	// ssh -R: the host's 127.0.0.1:PORT reaches a local echo listener.
	var lc net.ListenConfig
	local, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = local.Close() }()
	go func() {
		for {
			conn, err := local.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(conn, conn); _ = conn.Close() }()
		}
	}()
	ln, err := c.ListenLoopback()
	if err != nil {
		t.Fatalf("remote listen: %v", err)
	}
	fwd := remote.Forward(ctx, ln, local.Addr().String())
	addr := ln.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() || addr.Port == 0 {
		t.Fatalf("remote listener address %v, want 127.0.0.1 and a port", addr)
	}
	conn, err := net.Dial("tcp", addr.String()) // the host is this machine
	if err != nil {
		t.Fatal(err)
	}
	_, _ = conn.Write([]byte("ping\n"))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Fatalf("through the forward: got %q %v", line, err)
	}
	fwd.Close()
	_ = conn.Close()
	if c2, err := net.DialTimeout("tcp", addr.String(), time.Second); err == nil {
		_ = c2.Close()
		t.Fatal("the host's forwarded port still accepts after Close")
	}
}

// TestHostKeyPolicy: a changed host key is refused (trust on first use
// or not); an unknown host is refused unless trust on first use is set,
// which records its key; a key the host does not authorize and unusable
// key files are refused, each with its own error.
func TestHostKeyPolicy(t *testing.T) {
	t.Parallel()
	s := sshtest.Require(t)
	ctx := t.Context()
	dial := func(mut func(c *kanban.SSHConfig)) error {
		cfg := s.SSHConfig(t.TempDir())
		mut(cfg)
		c, err := remote.Dial(ctx, cfg, 10*time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err
	}
	wrong := s.WrongKnownHosts(t)
	for _, tofu := range []bool{false, true} {
		if err := dial(func(c *kanban.SSHConfig) { c.KnownHostsFile, c.TrustOnFirstUse = wrong, tofu }); !errors.Is(err, remote.ErrHostKeyMismatch) {
			t.Fatalf("changed host key (tofu %v): got %v, want ErrHostKeyMismatch", tofu, err)
		}
	}
	empty := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := dial(func(c *kanban.SSHConfig) { c.KnownHostsFile = empty }); !errors.Is(err, remote.ErrHostKeyUnknown) {
		t.Fatalf("unknown host: got %v, want ErrHostKeyUnknown", err)
	}
	missing := filepath.Join(t.TempDir(), "absent")
	if err := dial(func(c *kanban.SSHConfig) { c.KnownHostsFile = missing }); !errors.Is(err, remote.ErrKnownHosts) {
		t.Fatalf("missing known_hosts: got %v, want ErrKnownHosts", err)
	}
	if err := dial(func(c *kanban.SSHConfig) { c.KnownHostsFile, c.TrustOnFirstUse = missing, true }); err != nil {
		t.Fatalf("trust on first use: %v", err)
	}
	b, err := os.ReadFile(missing)
	if err != nil || strings.TrimSpace(string(b)) != s.HostKeyLine {
		t.Fatalf("recorded known_hosts %q (%v), want %q", b, err, s.HostKeyLine)
	}
	if err := dial(func(c *kanban.SSHConfig) { c.KnownHostsFile = missing }); err != nil {
		t.Fatalf("the recorded key, without trust on first use: %v", err)
	}

	other := filepath.Join(t.TempDir(), "id")
	s2 := sshtest.Require(t) // its user key is not in s's authorized_keys
	if err := dial(func(c *kanban.SSHConfig) { c.KeyFile = s2.KeyFile }); !errors.Is(err, remote.ErrAuth) {
		t.Fatalf("unauthorized key: got %v, want ErrAuth", err)
	}
	if err := dial(func(c *kanban.SSHConfig) { c.KeyFile = other }); !errors.Is(err, remote.ErrKeyFile) {
		t.Fatalf("missing key file: got %v, want ErrKeyFile", err)
	}
	if err := os.Chmod(s2.KeyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dial(func(c *kanban.SSHConfig) { c.KeyFile = s2.KeyFile }); !errors.Is(err, remote.ErrKeyFile) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("key readable by others: got %v, want ErrKeyFile", err)
	}
	if err := dial(func(c *kanban.SSHConfig) { c.Port = freeClosedPort(t) }); !errors.Is(err, remote.ErrUnreachable) {
		t.Fatalf("nothing listening: got %v, want ErrUnreachable", err)
	}
}

func freeClosedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return p
}
