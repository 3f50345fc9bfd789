package reliability

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// banner is what `kandev serve` prints once it listens.
var banner = regexp.MustCompile(`serving on http://(\S+) `)

// serverSpec describes a `kandev serve` to run.
type serverSpec struct {
	bin     string
	dataDir string
	logDir  string
	name    string   // log file name
	args    []string // extra flags
	env     []string
	// tokenFile makes the server create (or read) the data dir's token
	// file instead of being given KANDEV_TOKEN.
	tokenFile bool
}

// server is a `kandev serve` child. Restarts keep its address, data dir
// and operator token, so clients reconnect to the same place.
type server struct {
	spec  serverSpec
	addr  string
	token string
	log   *os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startServer starts `kandev serve` on a free loopback port.
func startServer(ctx context.Context, spec serverSpec) (*server, error) {
	if err := os.MkdirAll(spec.dataDir, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(spec.logDir, spec.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	s := &server{spec: spec, addr: "127.0.0.1:0", log: logf}
	if !spec.tokenFile {
		s.token = randomToken()
	}
	if err := s.start(ctx); err != nil {
		_ = logf.Close()
		return nil, err
	}
	return s, nil
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	return hex.EncodeToString(b[:])
}

// start launches the process and waits (60 s at most) for its banner.
func (s *server) start(ctx context.Context) error {
	// No rate limits: the load and fault scenarios drive the backend
	// harder than one caller may.
	args := append([]string{"serve", "--addr", s.addr, "--data-dir", s.spec.dataDir, "--rate-calls=0", "--rate-writes=0"}, s.spec.args...)
	cmd := exec.Command(s.spec.bin, args...) //nolint:gosec // the kandev binary under test
	cmd.Env = append(os.Environ(), s.spec.env...)
	if !s.spec.tokenFile {
		cmd.Env = append(cmd.Env, "KANDEV_TOKEN="+s.token)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = s.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start kandev serve: %w", err)
	}
	done := make(chan struct{})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			_, _ = fmt.Fprintln(s.log, sc.Text()) // diagnosis only
			if m := banner.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(done)
	}()
	select {
	case addr := <-found:
		s.addr = addr
		if s.spec.tokenFile {
			b, err := os.ReadFile(filepath.Join(s.spec.dataDir, "token"))
			if err != nil {
				return fmt.Errorf("read the operator token file: %w", err)
			}
			s.token = strings.TrimSpace(string(b))
		}
		return nil
	case <-done:
		return errors.Join(fmt.Errorf("kandev serve exited before serving (see %s)", s.log.Name()), s.exitErr())
	case <-time.After(60 * time.Second):
		s.kill()
		return fmt.Errorf("kandev serve printed no banner within 60 s (see %s)", s.log.Name())
	case <-ctx.Done():
		s.kill()
		return ctx.Err()
	}
}

func (s *server) exitErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// url is the backend's base URL; wsURL its WebSocket endpoint.
func (s *server) url() string   { return "http://" + s.addr }
func (s *server) wsURL() string { return "ws://" + s.addr + "/ws" }

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill() // it may have exited already
	<-done
}

// stop sends SIGTERM and waits; after grace it kills. It reports whether
// the process exited by itself within grace.
func (s *server) stop(grace time.Duration) bool {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return true
	}
	select {
	case <-done:
		return true
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return true
	case <-time.After(grace):
		s.kill()
		return false
	}
}

// restart starts the process again on the same address (the previous one
// must have exited).
func (s *server) restart(ctx context.Context) error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		default:
			return errors.New("restart: kandev serve is still running")
		}
	}
	// The port was ours a moment ago; retry briefly in case the kernel
	// has not released it yet.
	var err error
	for range 20 {
		if err = s.start(ctx); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// close stops the server (if running) and closes its log.
func (s *server) close() {
	s.stop(15 * time.Second)
	_ = s.log.Close()
}

// pid is the running process's id.
func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}
