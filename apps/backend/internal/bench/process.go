package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// proc is a child process this run started (and only ever stops by its
// own handle).
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

// procSpec describes a child to start.
type procSpec struct {
	name   string
	bin    string
	args   []string
	env    []string // added to the environment
	dir    string
	logDir string
	// banner is matched against stdout and stderr lines; its first group is
	// returned (the address the child listens on).
	banner *regexp.Regexp
}

// startProc starts a child, copies its output to logDir/name.log and waits
// (at most 60 s) for its banner.
func startProc(ctx context.Context, sp procSpec) (*proc, string, error) {
	logf, err := os.Create(filepath.Join(sp.logDir, sp.name+".log"))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", sp.name, err)
	}
	cmd := exec.Command(sp.bin, sp.args...) //nolint:gosec // our own binaries, from make bench's flags
	cmd.Dir = sp.dir
	cmd.Env = append(os.Environ(), sp.env...)
	dieWithParent(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, "", fmt.Errorf("start %s: %w", sp.name, err)
	}
	p := &proc{name: sp.name, cmd: cmd, log: logf, done: make(chan struct{})}
	found := make(chan string, 1)
	var mu sync.Mutex // serialises writes to the log file
	var copiers sync.WaitGroup
	scan := func(r io.Reader) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			_, _ = fmt.Fprintln(logf, line) // the log is for diagnosis only
			mu.Unlock()
			if m := sp.banner.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, r) // keep draining after an over-long line
	}
	copiers.Add(2)
	go func() { defer copiers.Done(); scan(stdout) }()
	go func() { defer copiers.Done(); scan(stderr) }()
	go func() {
		copiers.Wait()
		p.err = cmd.Wait()
		close(p.done)
	}()
	select {
	case addr := <-found:
		return p, addr, nil
	case <-p.done:
		return nil, "", errors.Join(fmt.Errorf("%s exited before serving; see %s", sp.name, logf.Name()), p.err)
	case <-time.After(60 * time.Second):
		p.stop()
		return nil, "", fmt.Errorf("%s printed no banner within 60 s; see %s", sp.name, logf.Name())
	case <-ctx.Done():
		p.stop()
		return nil, "", ctx.Err()
	}
}

// stop asks the child to shut down (SIGTERM), and kills it after 10 s.
func (p *proc) stop() {
	if p == nil {
		return
	}
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM) // it may have exited already
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	_ = p.log.Close()
}

// kill ends the child with SIGKILL (no shutdown code runs) and waits for
// it to exit.
func (p *proc) kill() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s had exited before it was killed; see %s", p.name, p.log.Name())
	default:
	}
	if err := p.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("kill %s: %w", p.name, err)
	}
	<-p.done
	return nil
}

// alive reports an error if the child has exited.
func (p *proc) alive() error {
	select {
	case <-p.done:
		return errors.Join(fmt.Errorf("%s exited; see %s", p.name, p.log.Name()), p.err)
	default:
		return nil
	}
}

// runCmd runs a short command and returns its stdout.
func runCmd(ctx context.Context, dir string, env []string, bin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...) //nolint:gosec // our own binary, from make bench's flags
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s %v: %w: %s", filepath.Base(bin), args, err, ee.Stderr)
		}
		return "", fmt.Errorf("%s %v: %w", filepath.Base(bin), args, err)
	}
	return string(out), nil
}
