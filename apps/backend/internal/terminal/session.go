package terminal

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Bounds of one terminal.
const (
	MaxCols = 500
	MaxRows = 300
	// MaxInput is the most one input message may carry.
	MaxInput = 64 << 10
	// clientQueue is how many chunks of output (each at most readChunk)
	// wait for a slow client before the shell is held back.
	clientQueue = 64
	readChunk   = 16 << 10
	// drainWait bounds how long the output still in the terminal is read
	// after the shell exited.
	drainWait = 2 * time.Second
)

// Session is one open shell.
type Session struct {
	ID     string
	TaskID string
	m      *Manager
	cmd    *exec.Cmd
	pty    *os.File
	// done is closed once the shell was reaped, its group killed and its
	// terminal closed; read is closed when the output reader returned.
	// closing is closed when the terminal is about to close.
	done, read, closing chan struct{}
	exit                int
	why                 string

	mu         sync.Mutex
	backlog    []byte
	client     *Client
	detachedAt time.Time
	lastActive time.Time
	killed     bool
}

// Client is the one attachment of a session's output: Out carries it
// until the client detaches (Detach) or another attaches, which closes
// Gone.
type Client struct {
	Out  <-chan []byte
	out  chan []byte
	Gone chan struct{}
	once sync.Once
	s    *Session
}

// start forks the shell for taskID in dir on a new terminal, as the
// leader of a new session.
func start(m *Manager, taskID, dir string, cols, rows int) (*Session, error) {
	if cols < 1 || cols > MaxCols || rows < 1 || rows > MaxRows {
		return nil, kanban.FieldError("cols", "must be 1 to %d, and rows 1 to %d", MaxCols, MaxRows)
	}
	cmd := exec.Command(m.cfg.Shell) //nolint:gosec // the server's configured shell, never a client's
	cmd.Dir = dir
	cmd.Env = m.cfg.Env
	f, err := startPTY(cmd, cols, rows)
	if err != nil {
		m.cfg.Logger.Warn("terminal start failed", "task", taskID, "error", err)
		return nil, kanban.Errorf(kanban.CodeUnavailable, "the shell could not be started")
	}
	now := time.Now()
	s := &Session{ID: kanban.NewID(), TaskID: taskID, m: m, cmd: cmd, pty: f, done: make(chan struct{}), read: make(chan struct{}), closing: make(chan struct{}),
		detachedAt: now, lastActive: now}
	go s.readLoop()
	go s.waitLoop()
	return s, nil
}

// PID is the shell's process id, also its process group's.
func (s *Session) PID() int { return s.cmd.Process.Pid }

// Done is closed once the shell ended and was reaped.
func (s *Session) Done() <-chan struct{} { return s.done }

// ExitCode is the shell's exit status once Done (-1: killed by a signal).
func (s *Session) ExitCode() int { <-s.done; return s.exit }

// Reason says why the shell ended ("" when it exited by itself), once
// Done.
func (s *Session) Reason() string {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why
}

// Write sends input to the shell.
func (s *Session) Write(p []byte) error {
	if len(p) > MaxInput {
		return kanban.FieldError("input", "one message may carry at most %d KiB", MaxInput>>10)
	}
	s.touch()
	if _, err := s.pty.Write(p); err != nil {
		return kanban.Errorf(kanban.CodeUnavailable, "the terminal has ended")
	}
	return nil
}

// Resize sets the terminal's size.
func (s *Session) Resize(cols, rows int) error {
	if cols < 1 || cols > MaxCols || rows < 1 || rows > MaxRows {
		return kanban.FieldError("cols", "must be 1 to %d, and rows 1 to %d", MaxCols, MaxRows)
	}
	if err := setSize(s.pty, cols, rows); err != nil {
		return kanban.Errorf(kanban.CodeUnavailable, "the terminal has ended")
	}
	return nil
}

// Attach makes c the session's client, detaching any other, and returns
// the output kept so far (at most Backlog bytes) with it: what follows
// comes on c.Out.
func (s *Session) Attach() ([]byte, *Client) {
	out := make(chan []byte, clientQueue)
	c := &Client{Out: out, out: out, Gone: make(chan struct{}), s: s}
	s.mu.Lock()
	old := s.client
	s.client = c
	backlog := append([]byte(nil), s.backlog...)
	s.mu.Unlock()
	if old != nil {
		old.once.Do(func() { close(old.Gone) })
	}
	return backlog, c
}

// Detach ends c's attachment; the session's grace period starts when it
// has no client.
func (c *Client) Detach() {
	c.once.Do(func() { close(c.Gone) })
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == c {
		s.client = nil
		s.detachedAt = time.Now()
	}
}

// Kill ends the shell and its process group (the operator closed it).
func (s *Session) Kill() { s.kill("closed by the operator") }

// kill sends SIGKILL, once, to every process of the shell's session
// (its own process group and the job groups it made); waitLoop reaps it.
func (s *Session) kill(why string) {
	s.mu.Lock()
	first := !s.killed
	s.killed = true
	if first {
		s.why = why
	}
	s.mu.Unlock()
	if first {
		killSession(s.PID())
	}
}

func (s *Session) touch() {
	s.mu.Lock()
	s.lastActive = time.Now()
	s.mu.Unlock()
}

// expired says why the session is due to end at now ("" if it is not).
func (s *Session) expired(now time.Time, cfg Config) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.client == nil && now.Sub(s.detachedAt) > cfg.Grace:
		return "no client for " + cfg.Grace.String()
	case now.Sub(s.lastActive) > cfg.IdleTimeout:
		return "idle for " + cfg.IdleTimeout.String()
	}
	return ""
}

// readLoop copies the terminal's output into the backlog and to the
// client (holding the shell back while a client's queue is full) until
// the terminal closes.
func (s *Session) readLoop() {
	defer close(s.read)
	buf := make([]byte, readChunk)
	for {
		n, err := s.pty.Read(buf)
		if n > 0 {
			chunk := append([]byte(nil), buf[:n]...)
			s.mu.Lock()
			s.lastActive = time.Now()
			s.backlog = append(s.backlog, chunk...)
			if over := len(s.backlog) - s.m.cfg.Backlog; over > 0 {
				s.backlog = append(s.backlog[:0], s.backlog[over:]...)
			}
			c := s.client
			s.mu.Unlock()
			if c != nil {
				select {
				case c.out <- chunk:
				case <-c.Gone:
				case <-s.closing:
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// waitLoop reaps the shell, kills what is left of its process group (no
// orphan outlives it), reads the output still in the terminal and closes
// it, and removes the session.
func (s *Session) waitLoop() {
	err := s.cmd.Wait()
	killSession(s.PID())
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		s.exit = ee.ExitCode()
	default:
		s.exit = -1
	}
	select {
	case <-s.read:
	case <-time.After(drainWait):
	}
	close(s.closing)
	_ = s.pty.Close()
	<-s.read
	s.mu.Lock()
	s.killed = true // a late kill must not signal a reused pid
	why := s.why
	s.mu.Unlock()
	s.m.remove(s)
	s.m.cfg.Logger.Info("terminal ended", "terminal", s.ID, "task", s.TaskID, "exit", s.exit, "reason", why)
	close(s.done)
}
