package agent

import (
	"context"
	"errors"
	"github.com/kandev/kandev/apps/backend/internal/logctx"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/docker"
	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Config configures the runtime.
type Config struct {
	Store     kanban.Store
	Publisher kanban.Publisher
	Logger    *slog.Logger
	// Guard is the filesystem policy: agents work only in checkouts it
	// allows, or in the per-task folders and worktrees under its data dir.
	Guard *fsguard.Policy
	// Clones is the clone cache worktrees of repositories registered by
	// remote URL only are made from (nil: they get none).
	Clones Clones
	// Executable is the kandev binary: the mock agent and every session's
	// own MCP server (kandev mcp) run from it.
	Executable string
	// BackendURL is where sessions' MCP servers connect (the backend
	// listens before its runtime is built).
	BackendURL string
	Version    string
	// Types are the agent types it launches (LoadTypes; default
	// BuiltinTypes).
	Types []Type
	// EnvAllow is what agents inherit of the backend's environment
	// (DefaultEnvAllow when nil).
	EnvAllow []string
	// MaxAgents bounds the agents that run at once (default 4); more
	// sessions wait QUEUED, and an idle agent yields its slot to them.
	MaxAgents int
	// PermissionWait bounds how long a permission request waits for an
	// operator before it is answered cancelled (default 1h).
	PermissionWait time.Duration
	// StartTimeout bounds initialize and session/new (default 2m: an npx
	// launch may download the agent first).
	StartTimeout time.Duration
	// ProbeTimeout bounds one detection probe (default 45s).
	ProbeTimeout time.Duration
	// StopGrace is the time between SIGTERM and SIGKILL (default 5s).
	StopGrace time.Duration
	// SilenceTimeout fails a session whose agent sends no ACP message for
	// this long during a turn while no question or permission is open
	// (default 30m).
	SilenceTimeout time.Duration
	// ScriptTimeout bounds each prepare and cleanup script (default 10m).
	ScriptTimeout time.Duration
	// OutputLimit bounds the bytes recorded per session (default 8 MiB).
	OutputLimit int
	// OperatorToken is redacted from anything shown of an agent's output.
	OperatorToken string
	// Events receive a kanban.TurnEvent at every turn's start and end
	// (the workflow engine's on_turn_start / on_turn_complete and
	// auto-advance react to them).
	Events *kanban.DomainEvents
	// BackendID names this backend as the owner of the sessions whose
	// agents it runs: the action layer writes it into the sessions it
	// creates (action.Deps.BackendID), Resume into those it takes over
	// (default: a new id per process). LeaseTTL is how
	// long another backend's lease stays valid after its last renewal:
	// sessions of a backend whose lease lapsed are orphans that Resume
	// takes over (default 15s; on SQLite no other backend has a lease).
	BackendID string
	LeaseTTL  time.Duration
	// Docker runs the Docker executor's containers (nil: no docker CLI
	// here, and Docker profiles fail to launch, saying so).
	Docker *docker.Client
	// Secret resolves a "secret:NAME" value of a profile's MCP server
	// environment or headers, for the agent launched with that server
	// only (nil: the servers that refer to one are not given).
	Secret func(ctx context.Context, ref string) (string, error)
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Events == nil {
		c.Events = &kanban.DomainEvents{}
	}
	if c.Types == nil {
		c.Types = BuiltinTypes()
	}
	if c.MaxAgents <= 0 {
		c.MaxAgents = 4
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.PermissionWait, time.Hour)
	def(&c.StartTimeout, 2*time.Minute)
	def(&c.ProbeTimeout, defaultProbeTimeout)
	def(&c.StopGrace, 5*time.Second)
	def(&c.SilenceTimeout, 30*time.Minute)
	def(&c.ScriptTimeout, 10*time.Minute)
	if c.OutputLimit <= 0 {
		c.OutputLimit = 8 << 20
	}
	if c.BackendID == "" {
		c.BackendID = kanban.NewID()
	}
	def(&c.LeaseTTL, DefaultLeaseTTL)
}

// DefaultLeaseTTL is how long a backend's lease lasts without renewal.
const DefaultLeaseTTL = 15 * time.Second

// Manager runs the agents of managed sessions. It implements action.Agents.
type Manager struct {
	cfg      Config
	store    kanban.Store
	pub      kanban.Publisher
	log      *slog.Logger
	acpLog   *slog.Logger
	workdirs *workdirs
	tokens   tokenFiles
	binary   binaryCache // the kandev binary's digest (the SSH executor uploads it by it)
	waiters  *action.Waiters
	// dockerReady is closed once the containers a previous process left
	// are swept: no container is created before (docker.go).
	dockerReady chan struct{}
	// ctx is the runtime's base context (New's): every call the runtime
	// makes derives from it, and when it ends every agent is stopped.
	ctx context.Context

	// types are the agent types by name; detect caches their detection.
	types  map[string]Type
	detect *detector

	mu     sync.Mutex
	runs   map[string]*run // live runs by session id, queued ones included
	queue  []*run          // waiting for a slot, oldest first
	active int             // runs holding a slot
	closed bool
	wg     sync.WaitGroup

	// takenOver counts the orphaned sessions Resume claimed.
	takenOver atomic.Uint64
}

var _ action.Agents = (*Manager)(nil)

// New returns a runtime whose agents live within ctx: every call it makes
// derives from ctx, and when ctx ends every agent is stopped (its session
// resumes on the next start, see Resume); Shutdown waits for them.
func New(ctx context.Context, cfg Config) *Manager {
	cfg.defaults()
	m := &Manager{cfg: cfg, store: cfg.Store, pub: cfg.Publisher, log: cfg.Logger, ctx: ctx,
		workdirs: &workdirs{store: cfg.Store, guard: cfg.Guard, clones: cfg.Clones, pub: cfg.Publisher}, waiters: action.NewWaiters(), runs: map[string]*run{},
		types: typeMap(cfg.Types), dockerReady: make(chan struct{})}
	m.detect = newDetector(m)
	// The ACP library logs unparsable lines raw: keep its diagnostics at
	// warning level without their attributes, which may hold agent output.
	m.acpLog = slog.New(dropAttrs{cfg.Logger.Handler()})
	m.tokens = newTokenFiles(cfg.Guard)
	if err := m.tokens.clear(); err != nil {
		m.log.Warn("remove the session token files a previous process left", "err", err)
	}
	context.AfterFunc(ctx, m.stopAll)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.sweepContainers()
	}()
	return m
}

// Start runs (or queues) the agent of a managed session this backend
// just created: the session's owner, written with it, is this backend
// (kanban.SessionCreate.Owner), so no other backend takes it over.
func (m *Manager) Start(sess *kanban.Session) {
	if sess == nil || !sess.Managed {
		return
	}
	m.enqueue(sess.ID, false)
}

// leaseSince is the oldest renewal of a lease still valid now.
func (m *Manager) leaseSince() time.Time { return time.Now().Add(-m.cfg.LeaseTTL) }

// Launches is true: this runtime runs agents.
func (m *Manager) Launches() bool { return true }

// BackendID is the id this runtime owns sessions as.
func (m *Manager) BackendID() string { return m.cfg.BackendID }

func (m *Manager) enqueue(id string, resume bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.runs[id] != nil {
		return
	}
	r := newRun(m, id, resume)
	m.runs[id] = r
	m.queue = append(m.queue, r)
	m.scheduleLocked()
}

// scheduleLocked starts queued runs while slots are free, and asks idle
// agents to yield their slots to the runs still queued.
func (m *Manager) scheduleLocked() {
	for len(m.queue) > 0 && m.active < m.cfg.MaxAgents {
		r := m.queue[0]
		m.queue = m.queue[1:]
		m.active++
		m.wg.Add(1)
		go r.drive()
	}
	need := len(m.queue)
	for need > 0 {
		var oldest *run
		var longest time.Duration
		for _, r := range m.runs {
			if d, idle := r.idleFor(); idle && r.stopWhy.Load() == int32(stopNone) && (oldest == nil || d > longest) {
				oldest, longest = r, d
			}
		}
		if oldest == nil {
			return
		}
		oldest.stop(stopEvict)
		need--
	}
}

// finished releases a run's slot.
func (m *Manager) finished(r *run) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, r.id)
	m.active--
	m.scheduleLocked()
	m.wg.Done()
}

// becameIdle gives queued runs a chance at an idle agent's slot.
func (m *Manager) becameIdle() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queue) > 0 {
		m.scheduleLocked()
	}
}

func (m *Manager) lookup(id string) *run {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs[id]
}

// Deliver tells a session's agent that prompts are pending.
func (m *Manager) Deliver(sessionID string, interrupt bool) {
	if r := m.lookup(sessionID); r != nil {
		r.poke(interrupt)
	}
}

// ModeChanged tells a task's running agents that its agent mode changed:
// each applies it before its next turn, an idle one at once.
func (m *Manager) ModeChanged(taskID string) {
	m.mu.Lock()
	var runs []*run
	for _, r := range m.runs {
		if r.taskID() == taskID {
			runs = append(runs, r)
		}
	}
	m.mu.Unlock()
	for _, r := range runs {
		r.poke(false)
	}
}

// Stopped stops the agents of sessions that were just cancelled.
func (m *Manager) Stopped(sessionIDs []string) {
	for _, id := range sessionIDs {
		m.mu.Lock()
		r := m.runs[id]
		for i, q := range m.queue {
			if q == r {
				// Never started: drop it from the queue.
				m.queue = append(m.queue[:i], m.queue[i+1:]...)
				delete(m.runs, id)
				r = nil
				break
			}
		}
		m.mu.Unlock()
		if r != nil {
			r.stop(stopCancel)
		}
	}
}

// Waiting counts a question of a session opening (+1) or closing (-1).
func (m *Manager) Waiting(sessionID string, delta int) {
	if r := m.lookup(sessionID); r != nil {
		r.inputWait(delta)
	}
}

// PermissionResolved wakes the agent waiting on permission id.
func (m *Manager) PermissionResolved(id string) { m.waiters.Wake(id) }

// ReleaseTask removes a task's worktrees (their branches stay) once the
// task is archived or about to be deleted.
func (m *Manager) ReleaseTask(ctx context.Context, taskID string) error {
	return m.workdirs.removeWorktrees(ctx, taskID)
}

// AddWorktree makes task t's worktree of the repository of link l (about
// to be linked) when the task already works in worktrees; nil when it
// does not yet, or works in its parent's directory (inherit_parent).
// The task's running agent keeps its directory. A failure that is not a
// refusal is logged and answered UNAVAILABLE without git's text.
func (m *Manager) AddWorktree(ctx context.Context, t *kanban.Task, l kanban.TaskRepository) (*kanban.Worktree, error) {
	if t.ParentID != "" && t.WorkspaceMode == kanban.WorkspaceInheritParent {
		return nil, nil //nolint:nilnil // it works in its parent's directory, from its parent's repositories
	}
	l.TaskID = t.ID // a task with a repository of its own works in its own directory
	wt, err := m.workdirs.add(ctx, t, l)
	if _, ok := kanban.AsError(err); err != nil && !ok {
		m.log.Warn("add a task's worktree", "task", t.ID, "repository", l.RepositoryID, "err", err.Error())
		return nil, kanban.Errorf(kanban.CodeUnavailable, "the repository's worktree could not be created; the backend's log has the cause")
	}
	return wt, err
}

// stopAll stops every agent for the backend's shutdown (their sessions
// resume on the next start) and starts no more.
func (m *Manager) stopAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for _, r := range m.runs {
		r.stop(stopShutdown)
	}
	m.queue = nil
}

// Shutdown stops every agent (their sessions resume on the next start),
// as the end of the base context does, and waits for them, bounded by
// ctx.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.stopAll()
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("agents did not stop in time")
	}
}

// update applies a run update and publishes what changed. An update cut
// short by the end of ctx is not logged (the run was stopped).
func (m *Manager) update(ctx context.Context, id string, u kanban.RunUpdate) {
	sess, task, err := m.store.UpdateRun(ctx, id, u)
	if err != nil {
		if kanban.ErrorCode(err) != kanban.CodeConflict && ctx.Err() == nil { // conflict: the session ended meanwhile
			m.log.Error("record session run", logctx.SessionKey, id, "err", err)
		}
		return
	}
	kanban.EventSessionUpdated.Publish(m.pub, action.SessionTopic(sess.ID), sess)
	kanban.EventSessionUpdated.Publish(m.pub, action.WorkspaceTopic(sess.WorkspaceID), sess)
	if task != nil {
		kanban.EventTaskUpdated.Publish(m.pub, action.WorkspaceTopic(task.WorkspaceID), task)
	}
	if u.State == kanban.SessionIdle {
		m.becameIdle()
	}
	if u.State == kanban.SessionFailed && sess.State == kanban.SessionFailed {
		m.cfg.Events.Emit(kanban.AgentFailed{TaskID: sess.TaskID, SessionID: sess.ID})
	}
}

func (m *Manager) publishMessage(ctx context.Context, msg *kanban.Message) {
	ev := kanban.SessionMessage{Message: msg}
	kanban.EventSessionMessage.Publish(m.pub, action.SessionTopic(msg.SessionID), ev)
	if s, err := m.store.GetSession(ctx, msg.SessionID); err == nil {
		kanban.EventSessionMessage.Publish(m.pub, action.WorkspaceTopic(s.WorkspaceID), ev)
	}
}

func (m *Manager) publishPermission(event kanban.Event[*kanban.Permission], p *kanban.Permission) {
	event.Publish(m.pub, action.SessionTopic(p.SessionID), p)
	event.Publish(m.pub, action.WorkspaceTopic(p.WorkspaceID), p)
}

// dropAttrs is a slog handler that logs messages without their attributes.
type dropAttrs struct{ slog.Handler }

func (d dropAttrs) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && d.Handler.Enabled(ctx, l)
}

func (d dropAttrs) Handle(ctx context.Context, r slog.Record) error {
	return d.Handler.Handle(ctx, slog.NewRecord(r.Time, r.Level, "acp: "+r.Message, 0))
}

func (d dropAttrs) WithAttrs([]slog.Attr) slog.Handler { return d }
func (d dropAttrs) WithGroup(string) slog.Handler      { return d }

// RunningBy counts the agents whose processes run now, by agent type and
// executor kind ("local", "docker" or "ssh").
func (m *Manager) RunningBy() map[[2]string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[[2]string]int{}
	for _, r := range m.runs {
		l := r.launched.Load()
		if l == nil {
			continue
		}
		exec := "local"
		switch {
		case l.docker != nil:
			exec = "docker"
		case l.ssh != nil:
			exec = "ssh"
		}
		out[[2]string{l.agent, exec}]++
	}
	return out
}

// Running is how many agents are running (holding a slot) now.
func (m *Manager) Running() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active
}
