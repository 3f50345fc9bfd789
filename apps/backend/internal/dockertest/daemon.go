// Package dockertest gives tests and benchmarks a real Docker daemon and a
// locally built image, with no registry: the daemon DOCKER_HOST (or the
// default socket) names when it answers, else a private `dockerd`
// (Debian's docker.io) started as root in a temporary directory, on a
// socket there, with no bridge and no iptables rules, stopped and removed
// by Close. The image (TestImage) is made from Debian's static busybox and
// a marker file, imported with `docker import`, and kept by its tag.
//
// It imports Kandev's docker client and the standard library.
package dockertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/docker"
)

// RequireEnv names the variable that, set to 1 (make test sets it), turns
// a daemon that cannot be reached or started into a test failure;
// without it those tests skip, loudly.
const RequireEnv = "KANDEV_DOCKER_TESTS"

// Bounds of starting and stopping a private daemon.
const (
	startTimeout = 60 * time.Second
	stopTimeout  = 20 * time.Second
)

// Daemon is a Docker daemon tests can use.
type Daemon struct {
	// Host is the DOCKER_HOST of a private daemon ("" for the machine's).
	Host string
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the daemon exited, exit set
	exit error
}

var shared struct {
	once sync.Once
	d    *Daemon
	err  error
}

// Client is a docker client of the daemon.
func (d *Daemon) Client() *docker.Client {
	c := docker.New()
	if c == nil {
		return nil
	}
	if d.Host != "" {
		c.Env = append(c.Env, "DOCKER_HOST="+d.Host)
	}
	return c
}

// Require returns the test binary's daemon, reaching or starting it on
// first use. When there is none it fails t under RequireEnv and skips it
// loudly otherwise, saying why.
func Require(t testing.TB) *Daemon {
	t.Helper()
	shared.once.Do(func() { shared.d, shared.err = Start(context.WithoutCancel(t.Context())) })
	if shared.err == nil {
		return shared.d
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("no Docker daemon: %v", shared.err)
	}
	t.Skipf("*** SKIPPED: no Docker daemon: %v (make docker installs docker.io; make test requires it) ***", shared.err)
	return nil
}

// Close stops a private daemon a test started (call it after the
// package's tests, e.g. among pgtest.Main's); a failure is printed.
func Close() {
	if shared.d == nil {
		return
	}
	if err := shared.d.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "dockertest: stop dockerd:", err)
	}
}

// Start reaches the machine's daemon or starts a private one (as root);
// Stop stops what it started.
func Start(ctx context.Context) (*Daemon, error) {
	c := docker.New()
	if c == nil {
		return nil, errors.New("the docker CLI is not installed (make docker installs Debian's docker.io)")
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if c.Ping(pingCtx) == nil {
		return &Daemon{}, nil
	}
	if _, err := exec.LookPath("dockerd"); err != nil {
		return nil, errors.New("no daemon answers and dockerd is not installed (make docker installs Debian's docker.io)")
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("no daemon answers, and dockerd can only be started as root")
	}
	return startPrivate(ctx)
}

// startPrivate starts dockerd in a new temporary directory. The daemon is
// told to stop if the thread that started it ends (a killed test binary
// leaves none behind): that thread waits for the daemon.
func startPrivate(ctx context.Context) (*Daemon, error) {
	dir, err := os.MkdirTemp("", "kd-") // short: the socket path is bounded
	if err != nil {
		return nil, err
	}
	d := &Daemon{dir: dir, Host: "unix://" + filepath.Join(dir, "docker.sock"), done: make(chan struct{})}
	log, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()                                                                       // Pdeathsig follows this thread, which lives as long as the daemon
		d.cmd = exec.Command("dockerd", "--host", d.Host, "--data-root", filepath.Join(dir, "root"), //nolint:gosec // fixed arguments
			"--exec-root", filepath.Join(dir, "exec"), "--pidfile", filepath.Join(dir, "dockerd.pid"),
			"--bridge", "none", "--iptables=false", "--ip6tables=false")
		d.cmd.Stdout, d.cmd.Stderr = log, log
		d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		if err := d.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		d.exit = d.cmd.Wait()
		close(d.done)
	}()
	if err := <-started; err != nil {
		return nil, errors.Join(fmt.Errorf("start dockerd: %w", err), log.Close(), os.RemoveAll(dir))
	}
	if err := d.wait(ctx); err != nil {
		return nil, errors.Join(err, d.Stop(), log.Close())
	}
	return d, log.Close()
}

// wait waits until the private daemon answers.
func (d *Daemon) wait(ctx context.Context) error {
	c := d.Client()
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-d.done:
			return fmt.Errorf("dockerd exited at start (%w); its log is %s", d.exit, filepath.Join(d.dir, "dockerd.log"))
		default:
		}
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.Ping(pingCtx)
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("dockerd did not answer within %s", startTimeout)
}

// Stop stops a private daemon (SIGTERM, then SIGKILL after a bound) and
// removes its directory; the machine's daemon is left alone.
func (d *Daemon) Stop() error {
	if d.cmd == nil || d.cmd.Process == nil {
		return nil
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(stopTimeout):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
	unmountUnder(d.dir)
	return os.RemoveAll(d.dir)
}

// unmountUnder detaches what the daemon left mounted under dir (its
// network namespace file, overlay layers), deepest first, so that dir
// can be removed.
func unmountUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
			points = append(points, f[1])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	for _, p := range points {
		_ = syscall.Unmount(p, syscall.MNT_DETACH)
	}
}
