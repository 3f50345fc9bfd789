// Package sshtest gives tests and benchmarks a real SSH server: Debian's
// openssh-server `sshd` started on 127.0.0.1 at a free port, as the
// current user, with a throwaway host key, a throwaway user key in a
// generated authorized_keys, no PAM and no passwords, its pid file and
// log in a temporary directory; stopped and removed when the test ends.
//
// It imports Kandev's kanban (the profile config it describes) and the
// standard library only.
package sshtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// RequireEnv names the variable that, set to 1 (make test sets it), turns
// an sshd that is missing or cannot start into a test failure; without it
// those tests skip, loudly.
const RequireEnv = "KANDEV_SSH_TESTS"

// SSHD is where Debian installs the server (it must be run by its
// absolute path).
const SSHD = "/usr/sbin/sshd"

// Bounds of starting and stopping a server.
const (
	startTimeout = 20 * time.Second
	stopTimeout  = 10 * time.Second
)

// Server is a running sshd.
type Server struct {
	Dir  string
	Port int
	User string
	// KeyFile is the user's private key (0600); KnownHostsFile records the
	// server's host key for 127.0.0.1 at Port.
	KeyFile, KnownHostsFile string
	// HostKeyLine is the known_hosts line of the server's key.
	HostKeyLine string

	cmd  *exec.Cmd
	done chan struct{}
}

// Require starts a server for t (stopped when t ends). When it cannot, it
// fails t under RequireEnv and skips it loudly otherwise, saying why.
func Require(t testing.TB) *Server {
	t.Helper()
	s, err := Start(t.Context(), t.TempDir())
	if err == nil {
		t.Cleanup(s.Stop)
		return s
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("no SSH server: %v", err)
	}
	t.Skipf("*** SKIPPED: no SSH server: %v (make ssh installs openssh-server; make test requires it) ***", err)
	return nil
}

// Config is an exec-ssh profile config of the server for workRoot.
func (s *Server) Config(workRoot string) map[string]any {
	return map[string]any{"host": "127.0.0.1", "port": s.Port, "user": s.User, "key_file": s.KeyFile,
		"known_hosts_file": s.KnownHostsFile, "work_root": workRoot}
}

// SSHConfig is Config as a checked kanban.SSHConfig.
func (s *Server) SSHConfig(workRoot string) *kanban.SSHConfig {
	return &kanban.SSHConfig{Host: "127.0.0.1", Port: s.Port, User: s.User, KeyFile: s.KeyFile,
		KnownHostsFile: s.KnownHostsFile, WorkRoot: workRoot}
}

// Start starts a server whose files live in dir (which must be short
// enough for the keys' paths and exist).
func Start(ctx context.Context, dir string) (*Server, error) {
	if _, err := os.Stat(SSHD); err != nil {
		return nil, errors.New("sshd is not installed (make ssh installs Debian's openssh-server)")
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		return nil, errors.New("ssh-keygen is not installed (make ssh installs Debian's openssh-server)")
	}
	u, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("who am I: %w", err)
	}
	s := &Server{Dir: dir, User: u.Username, KeyFile: filepath.Join(dir, "id_ed25519"), KnownHostsFile: filepath.Join(dir, "known_hosts")}
	hostKey := filepath.Join(dir, "host_ed25519")
	for _, k := range []string{hostKey, s.KeyFile} {
		if err := keygen(k); err != nil {
			return nil, err
		}
	}
	pub, err := os.ReadFile(s.KeyFile + ".pub")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil { //nolint:gosec // the test's temp dir
		return nil, err
	}
	if os.Geteuid() == 0 {
		// sshd's privilege separation directory (Debian's package makes it
		// at boot; a container may lack it).
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil { //nolint:gosec // sshd requires it world-readable
			return nil, err
		}
	}
	var last error
	for range 3 { // a port picked free can be taken before sshd binds it
		if last = s.start(ctx, hostKey); last == nil {
			break
		}
	}
	if last != nil {
		return nil, last
	}
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		s.Stop()
		return nil, err
	}
	s.HostKeyLine = HostLine(s.Port, string(hostPub))
	if err := os.WriteFile(s.KnownHostsFile, []byte(s.HostKeyLine+"\n"), 0o600); err != nil { //nolint:gosec // the test's temp dir
		s.Stop()
		return nil, err
	}
	return s, nil
}

// HostLine is the known_hosts line of pub (an OpenSSH public key line)
// for 127.0.0.1 at port.
func HostLine(port int, pub string) string {
	f := strings.Fields(pub)
	if len(f) < 2 {
		return ""
	}
	return "[127.0.0.1]:" + strconv.Itoa(port) + " " + f[0] + " " + f[1]
}

// WrongKnownHosts writes a known_hosts file that records another key for
// the server (a host whose key changed) and returns its path.
func (s *Server) WrongKnownHosts(t testing.TB) string {
	t.Helper()
	other := filepath.Join(s.Dir, "other_ed25519")
	if err := keygen(other); err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(other + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.Dir, "known_hosts.wrong")
	if err := os.WriteFile(p, []byte(HostLine(s.Port, string(pub))+"\n"), 0o600); err != nil { //nolint:gosec // the test's temp dir
		t.Fatal(err)
	}
	return p
}

func keygen(path string) error {
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "kandev-test", "-f", path).CombinedOutput() //nolint:gosec // fixed arguments, a temp path
	if err != nil {
		return fmt.Errorf("ssh-keygen: %w: %s", err, out)
	}
	return nil
}

// config is the server's sshd_config.
func (s *Server) config(hostKey string) string {
	lines := []string{
		"ListenAddress 127.0.0.1:" + strconv.Itoa(s.Port),
		"HostKey " + hostKey,
		"PidFile " + filepath.Join(s.Dir, "sshd.pid"),
		"AuthorizedKeysFile " + filepath.Join(s.Dir, "authorized_keys"),
		"StrictModes no", "UsePAM no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes", "PermitRootLogin prohibit-password", "AllowTcpForwarding yes",
		"GatewayPorts no", "PermitUserEnvironment no", "PrintMotd no", "LogLevel VERBOSE", "MaxStartups 100:30:200",
		"MaxSessions 100",
	}
	return strings.Join(lines, "\n") + "\n"
}

// start starts sshd at a free port and waits for its banner. sshd is told
// to stop if the thread that started it ends (a killed test binary leaves
// none behind): that thread waits for it.
func (s *Server) start(ctx context.Context, hostKey string) error {
	port, err := freePort(ctx)
	if err != nil {
		return err
	}
	s.Port = port
	conf := filepath.Join(s.Dir, "sshd_config")
	if err := os.WriteFile(conf, []byte(s.config(hostKey)), 0o600); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(s.Dir, "sshd.log"))
	if err != nil {
		return err
	}
	defer func() { _ = log.Close() }()
	s.done = make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		s.cmd = exec.Command(SSHD, "-D", "-e", "-f", conf) //nolint:gosec // fixed arguments
		s.cmd.Stdout, s.cmd.Stderr = log, log
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		if err := s.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = s.cmd.Wait()
		close(s.done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start sshd: %w", err)
	}
	if err := s.wait(); err != nil {
		s.Stop()
		b, _ := os.ReadFile(filepath.Join(s.Dir, "sshd.log"))
		return fmt.Errorf("%w; its log: %s", err, kanban.Clip(string(b), 600))
	}
	return nil
}

// wait waits for the server's SSH banner.
func (s *Server) wait() error {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errors.New("sshd exited at start")
		default:
		}
		if banner(s.Port) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("sshd did not answer within %s", startTimeout)
}

func banner(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return false
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 4)
	n, _ := c.Read(b)
	return n == 4 && string(b) == "SSH-"
}

func freePort(ctx context.Context) (int, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// Stop stops the server (SIGTERM, then SIGKILL after a bound); the
// sessions it forked end with their connections.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}
