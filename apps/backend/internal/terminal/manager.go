// Package terminal runs the operator's shells on the backend machine, one
// pseudo-terminal each, in a task's working directory, and streams them
// over a WebSocket (stream.go). A shell is the operator's only: the
// application authenticates the connection by the operator's bound
// identity before a Manager sees it, and the shell, its arguments and its
// environment come from the server's configuration, never from a
// message. Everything is bounded: shells per task and in all, the output
// kept for a reattach and queued for a client, the size of one input
// message, how long a shell lives idle or without a client. A shell is
// killed with its whole process group when its task is stopped, archived
// or deleted (CloseTask), after its client has been gone for the grace
// period, when idle too long, and when the backend stops (Close).
//
// It imports kanban (ids and error codes), creack/pty, gorilla/websocket
// and the standard library; never the store, the action layer or a
// transport of the application.
package terminal

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Defaults of a Config's zero fields.
const (
	DefaultMaxPerTask  = 3
	DefaultMaxTotal    = 12
	DefaultIdleTimeout = 30 * time.Minute
	DefaultGrace       = 30 * time.Second
	DefaultBacklog     = 64 << 10
)

// Config configures a Manager.
type Config struct {
	// Shell is the absolute path of the shell every terminal runs (see
	// Shell for the default).
	Shell string
	// Env is the shell's whole environment (KEY=VALUE; see Environ).
	Env []string
	// MaxPerTask and MaxTotal bound the shells open for one task and in
	// all.
	MaxPerTask, MaxTotal int
	// IdleTimeout ends a shell that neither read input nor wrote output
	// for that long; Grace ends one whose client has been gone that long.
	IdleTimeout, Grace time.Duration
	// Backlog is how many bytes of a shell's latest output are kept for a
	// client that reattaches.
	Backlog int
	Logger  *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.MaxPerTask <= 0 {
		c.MaxPerTask = DefaultMaxPerTask
	}
	if c.MaxTotal <= 0 {
		c.MaxTotal = DefaultMaxTotal
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.Backlog <= 0 {
		c.Backlog = DefaultBacklog
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Manager owns the open shells of one backend.
type Manager struct {
	cfg  Config
	stop chan struct{}
	wg   sync.WaitGroup // the sweeper

	mu       sync.Mutex
	sessions map[string]*Session
	pending  map[string]int // shells of a task being started
	closed   bool
}

// New starts a Manager (and its sweeper, stopped by Close).
func New(cfg Config) (*Manager, error) {
	cfg = cfg.withDefaults()
	if cfg.Shell == "" {
		return nil, errors.New("terminal: no shell configured")
	}
	m := &Manager{cfg: cfg, stop: make(chan struct{}), sessions: map[string]*Session{}, pending: map[string]int{}}
	m.wg.Go(m.sweep)
	return m, nil
}

// Limits reports the bounds in force (defaults applied).
func (m *Manager) Limits() Config { return m.cfg }

// Open starts a shell for task taskID in dir (a directory the caller
// resolved and checked) on a cols×rows terminal. CONFLICT when the task
// or the backend has as many shells as allowed; UNAVAILABLE once the
// Manager is closed.
func (m *Manager) Open(taskID, dir string, cols, rows int) (*Session, error) {
	if err := m.reserve(taskID); err != nil {
		return nil, err
	}
	s, err := start(m, taskID, dir, cols, rows) // outside the lock: a fork
	m.mu.Lock()
	m.pending[taskID]--
	if m.pending[taskID] == 0 {
		delete(m.pending, taskID)
	}
	closed := m.closed
	if err == nil && !closed {
		m.sessions[s.ID] = s
	}
	m.mu.Unlock()
	switch {
	case err != nil:
		return nil, err
	case closed:
		s.kill("the backend is shutting down")
		return nil, kanban.Errorf(kanban.CodeUnavailable, "the backend is shutting down")
	}
	m.cfg.Logger.Info("terminal opened", "terminal", s.ID, "task", taskID, "pid", s.PID())
	return s, nil
}

// reserve takes a place for a new shell of taskID within the bounds.
func (m *Manager) reserve(taskID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return kanban.Errorf(kanban.CodeUnavailable, "the backend is shutting down")
	}
	n, total := m.pending[taskID], len(m.sessions)
	for _, s := range m.sessions {
		if s.TaskID == taskID {
			n++
		}
	}
	for _, p := range m.pending {
		total += p
	}
	if n >= m.cfg.MaxPerTask {
		return kanban.Errorf(kanban.CodeConflict, "this task already has %d terminals, the most it allows; close one first", m.cfg.MaxPerTask)
	}
	if total >= m.cfg.MaxTotal {
		return kanban.Errorf(kanban.CodeConflict, "the backend already runs %d terminals, the most it allows; close one first", m.cfg.MaxTotal)
	}
	m.pending[taskID]++
	return nil
}

// Lookup returns the open shell id of task taskID (NOT_FOUND otherwise:
// it ended, or belongs to another task).
func (m *Manager) Lookup(id, taskID string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || s.TaskID != taskID {
		return nil, kanban.Errorf(kanban.CodeNotFound, "no such terminal is open for this task (it ended)")
	}
	return s, nil
}

// Count is how many shells task taskID has open ("" counts all).
func (m *Manager) Count(taskID string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.sessions {
		if taskID == "" || s.TaskID == taskID {
			n++
		}
	}
	return n
}

// CloseTask kills every shell of task taskID (its process groups); it
// returns at once, the shells are reaped in the background. It returns
// how many it killed.
func (m *Manager) CloseTask(taskID string, why string) int {
	m.mu.Lock()
	var kill []*Session
	for _, s := range m.sessions {
		if s.TaskID == taskID {
			kill = append(kill, s)
		}
	}
	m.mu.Unlock()
	for _, s := range kill {
		s.kill(why)
	}
	return len(kill)
}

// Close kills every shell and waits, within ctx, until each is reaped;
// no shell opens after it.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.stop)
	}
	all := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		all = append(all, s)
	}
	m.mu.Unlock()
	m.wg.Wait()
	for _, s := range all {
		s.kill("the backend is shutting down")
	}
	for _, s := range all {
		select {
		case <-s.done:
		case <-ctx.Done():
			return errors.New("terminal: shells not reaped before the shutdown deadline")
		}
	}
	return nil
}

func (m *Manager) remove(s *Session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, s.ID)
}

// sweep ends the shells idle for IdleTimeout or without a client for
// Grace, until Close.
func (m *Manager) sweep() {
	every := min(m.cfg.Grace, m.cfg.IdleTimeout) / 4
	every = max(10*time.Millisecond, min(every, 5*time.Second))
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-tick.C:
			m.mu.Lock()
			var due []*Session
			var why []string
			for _, s := range m.sessions {
				if w := s.expired(now, m.cfg); w != "" {
					due, why = append(due, s), append(why, w)
				}
			}
			m.mu.Unlock()
			for i, s := range due {
				s.kill(why[i])
			}
		}
	}
}
