package agent

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// tailBuffer keeps the last max bytes written to it (an agent's stderr),
// so a flood costs a fixed amount of memory.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		p = p[len(p)-t.max:]
		t.buf = append(t.buf[:0], p...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// newRedactor redacts the secret values of env (KEY=VALUE, by name) plus
// extra (the session token, the operator token) from text shown to
// operators, as well as anything shaped like a credential.
func newRedactor(env []string, extra ...string) *redact.Redactor {
	return redact.New(append(redact.EnvSecrets(env), extra...)...)
}

// process is a started agent (or script) process in its own process
// group, so that stopping it also stops what it started.
type process struct {
	cmd *exec.Cmd
	// signal stops a process that is not cmd's (an agent on an SSH
	// host): SIGKILL when hard, else SIGTERM, to its whole group.
	signal func(hard bool)
	done   chan struct{} // closed when Wait returned
	err    error         // Wait's error, valid after done
}

// kill signals the process's group (SIGKILL when hard, else SIGTERM).
func (p *process) kill(hard bool) {
	if p.signal != nil {
		p.signal(hard)
		return
	}
	killGroup(p.cmd, hard)
}

// startProcess starts cmd in a new process group and reaps it.
func startProcess(cmd *exec.Cmd) (*process, error) {
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exitCode is the process's exit code once it exited (-1 when it was
// killed by a signal or never ran).
func (p *process) exitCode() int {
	var ee *exec.ExitError
	var status interface{ ExitStatus() int } // an SSH session's exit (x/crypto/ssh.ExitError)
	if p.err == nil {
		return 0
	}
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if errors.As(p.err, &status) {
		return status.ExitStatus()
	}
	return -1
}

// terminate stops the process group: SIGTERM, then SIGKILL when it has
// not exited within grace. It returns once the process has exited.
func (p *process) terminate(grace time.Duration) {
	select {
	case <-p.done:
		p.kill(true) // leftovers of the group
		return
	default:
	}
	p.kill(false)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	}
	p.kill(true)
	<-p.done
}

// limitedWriter keeps the first max bytes written to it and counts the rest.
type limitedWriter struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	room := l.max - len(l.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		l.buf = append(l.buf, p[:room]...)
	}
	l.dropped += len(p) - room
	return len(p), nil
}

func (l *limitedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}

var _ io.Writer = (*limitedWriter)(nil)

// scriptCommand is an executor script run with sh in dir on this machine.
func scriptCommand(dir, script string, env []string) *exec.Cmd {
	cmd := exec.Command("sh", "-c", script) //nolint:gosec // the executor profile's script, set by the operator, is meant to run
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// runScript runs an executor script's command, bounded by timeout (its
// process group is killed then), and returns its combined output (the
// first maxOut bytes) and an error when it failed or timed out.
func runScript(ctx context.Context, cmd *exec.Cmd, timeout time.Duration, maxOut int) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := &limitedWriter{max: maxOut}
	cmd.Stdout, cmd.Stderr = out, out
	p, err := startProcess(cmd)
	if err != nil {
		return "", err
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.terminate(2 * time.Second)
		text := out.String()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return text, errors.New("timed out after " + timeout.String())
		}
		return text, ctx.Err()
	}
	text := out.String()
	if out.dropped > 0 {
		text += "\n[output truncated]"
	}
	if p.err != nil {
		var ee *exec.ExitError
		if errors.As(p.err, &ee) {
			return text, errors.New("exited with " + ee.String())
		}
		return text, p.err
	}
	return text, nil
}
