package agent

import (
	"context"
	"errors"
	"fmt"
	"github.com/kandev/kandev/apps/backend/internal/logctx"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/docker"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// Why a run stops before its agent exits by itself.
type stopMode int32

const (
	stopNone     stopMode = iota
	stopCancel            // the session was cancelled (already recorded)
	stopEvict             // its slot went to a queued session: COMPLETED
	stopShutdown          // the backend is shutting down: state kept for resume
)

// run is one managed session's agent: prepared, launched, fed prompts
// turn by turn, and stopped. Its state is split by what changes together,
// each part with one way of sharing it:
//   - the signals (the stop context and its reason, the wake-ups): anyone
//     sends them, the run's goroutine waits on them;
//   - launch: what the run resolved and started, built by the run's
//     goroutine and published once the agent process runs, never changed
//     after;
//   - turn: what changes as the turns go by, under its own mutex;
//   - the agent's activity (lastSeen, loading): atomics the ACP callbacks
//     update on every message.
type run struct {
	m  *Manager
	id string
	// resume is set for a session a previous backend process left live.
	resume bool
	// rec records the session's conversation; drive sets it before any
	// other goroutine can read it.
	rec *recorder

	// ctx is the run's lifetime, cancelled by stop (whose reason is set
	// first, in stopWhy). It derives from the runtime's base context
	// without its cancellation: the runtime stops its runs itself, so
	// that each knows why it stopped. Writes that record how the run ended
	// use keep().
	ctx     context.Context
	cancel  context.CancelFunc
	stopWhy atomic.Int32
	// wake says prompts are pending; interrupts tells the turn in
	// progress that it was cancelled; aborted is closed when the run must
	// end FAILED at once (watchdog.go).
	wake       chan struct{}
	interrupts chan struct{}
	aborted    chan struct{}
	abortOnce  sync.Once

	// launched is the run's launch, nil until the agent process runs.
	launched atomic.Pointer[launch]

	turn  turnState
	usage usageSeen // what the agent reported during the current turn (usage.go)

	// box is the run's container (Docker executor), host its SSH host
	// (SSH executor), each set and removed by the run's goroutine only
	// (docker.go, ssh.go).
	box  *box
	host *sshHost

	// lastSeen is when the agent last sent an ACP message (unix nanos);
	// loading is set while the replayed updates of session/load are
	// ignored.
	lastSeen atomic.Int64
	loading  atomic.Bool
}

// launch is what a run resolved and started: built by the run's
// goroutine (prepare, then start) and, once published in run.launched,
// never changed. The ACP callbacks get it with their connection.
type launch struct {
	task    *kanban.Task
	agent   string
	typ     Type
	command Command
	// model is the profile's model ("": the agent's default).
	model       string
	executor    *kanban.ExecutorProfile
	docker      *kanban.DockerConfig // the Docker executor's config (nil: a local agent)
	ssh         *kanban.SSHConfig    // the SSH executor's config (nil: not on an SSH host)
	autoApprove bool
	// workdir is the session's local working directory; cwd is the
	// agent's (workdir, or its copy on the SSH host).
	workdir string
	cwd     string
	// bridge is where the session's kandev mcp runs (nil: this machine).
	bridge  *bridge
	env     []string
	servers []profileServer
	token   string
	// tokenFile holds token for the session's kandev mcp (tokenfile.go).
	tokenFile string
	redact    *redact.Redactor
	stderr    *tailBuffer

	// Set by start: the agent process, its ACP connection, and the order
	// of its permission requests behind the updates it wrote before them
	// (order.go).
	proc  *process
	conn  *acp.ClientSideConnection
	order *updateOrder
}

// turnState is what changes as the run goes: the agent's ACP session and
// its modes, what its sessions get, whether a turn is in progress, the
// questions and permissions open, the session's state and why the run
// must fail. The run's goroutine, the ACP callbacks and the runtime
// (Deliver, Waiting, the scheduler) share it under mu.
type turnState struct {
	mu       sync.Mutex
	agentSID acp.SessionId
	modes    sessionModes
	// servers are the MCP servers the agent's sessions get; canClose:
	// the agent supports session/close.
	servers   []acp.McpServer
	canClose  bool
	active    bool // a turn is in progress
	waits     int  // questions and permissions open
	state     kanban.SessionState
	idleSince time.Time
	// failure, once set, is why the run ends FAILED (watchdog.go).
	failure string
}

func newRun(m *Manager, id string, resume bool) *run {
	r := &run{m: m, id: id, resume: resume, wake: make(chan struct{}, 1), interrupts: make(chan struct{}, 1), aborted: make(chan struct{})}
	r.turn.state = kanban.SessionQueued
	r.ctx, r.cancel = context.WithCancel(logctx.WithSession(context.WithoutCancel(m.ctx), id))
	return r
}

// keep is the context of the writes that record how the run went, which
// must finish after the run was stopped.
func (r *run) keep() context.Context { return context.WithoutCancel(r.ctx) }

// taskID is the run's task ("" before the agent was launched).
func (r *run) taskID() string {
	if l := r.launched.Load(); l != nil {
		return l.task.ID
	}
	return ""
}

// stop asks the run to end for why; the first reason wins.
func (r *run) stop(why stopMode) {
	r.stopWhy.CompareAndSwap(int32(stopNone), int32(why))
	r.cancel()
}

// stopped reports whether the run was asked to stop.
func (r *run) stopped() bool { return r.ctx.Err() != nil }

// poke tells the run that prompts are pending; with interrupt, the turn in
// progress is cancelled first.
func (r *run) poke(interrupt bool) {
	select {
	case r.wake <- struct{}{}:
	default:
	}
	if !interrupt {
		return
	}
	l := r.launched.Load()
	r.turn.mu.Lock()
	sid, active := r.turn.agentSID, r.turn.active
	r.turn.mu.Unlock()
	if active && l != nil {
		_ = l.conn.Cancel(r.ctx, acp.CancelNotification{SessionId: sid}) // best effort: the turn may have just ended
		select {
		case r.interrupts <- struct{}{}:
		default:
		}
	}
}

// setState records a state change (and the task state it implies).
func (r *run) setState(st kanban.SessionState) {
	r.turn.mu.Lock()
	if r.turn.state == st {
		r.turn.mu.Unlock()
		return
	}
	r.turn.state = st
	if st == kanban.SessionIdle {
		r.turn.idleSince = time.Now()
	}
	r.turn.mu.Unlock()
	r.m.log.DebugContext(r.ctx, "agent session state", "state", string(st))
	r.m.update(r.ctx, r.id, kanban.RunUpdate{State: st})
}

// inputWait counts a question or permission opening (+1) or closing (-1)
// and moves the session between RUNNING and WAITING_FOR_INPUT.
func (r *run) inputWait(delta int) {
	r.seen() // the silence watchdog counts from the wait's start or end
	r.turn.mu.Lock()
	r.turn.waits += delta
	waiting, active := r.turn.waits > 0, r.turn.active
	r.turn.mu.Unlock()
	if !active {
		return
	}
	if waiting {
		r.setState(kanban.SessionWaitingForInput)
	} else {
		r.setState(kanban.SessionRunning)
	}
}

// idleFor reports how long the run has been idle (false when not idle).
func (r *run) idleFor() (time.Duration, bool) {
	r.turn.mu.Lock()
	defer r.turn.mu.Unlock()
	if r.turn.state != kanban.SessionIdle || r.turn.active {
		return 0, false
	}
	return time.Since(r.turn.idleSince), true
}

// drive runs the session from start to end. A run stopped while it
// prepares or launches ends as its stop says (finish), not as a failure.
func (r *run) drive() {
	defer r.m.finished(r)
	// The token file goes when the run ends, however it ends: after the
	// agent (and the MCP servers it started) stopped, before the slot is
	// released and the session could be launched again.
	defer r.removeToken()
	defer r.removeContainer() // after the cleanup script, before the token file goes
	defer r.removeHost()      // likewise
	sess, err := r.m.store.GetSession(r.ctx, r.id)
	if err != nil || sess.State.Ended() {
		return
	}
	r.rec = newRecorder(r.keep(), r.m.store, r.id, r.m.cfg.OutputLimit, r.m.log, r.m.publishMessage)
	defer r.rec.close()
	defer r.fetchBack() // after the agent stopped and the cleanup script ran, before the host's directory goes
	l, err := r.prepare(sess)
	if err != nil || r.stopped() {
		if r.stopped() {
			r.finish(l)
			return
		}
		r.fail(err.Error(), l)
		return
	}
	if err := r.start(l); err != nil {
		r.fail(err.Error(), l)
		r.cleanup(l)
		return
	}
	if err := r.open(l, sess); err != nil {
		l.proc.terminate(r.m.cfg.StopGrace)
		r.fail(err.Error(), l)
		r.cleanup(l)
		return
	}
	r.turns(l)
	r.finish(l)
}

// prepare resolves the agent and executor, prepares the working directory
// and runs the prepare script. A failure's error text is shown to
// operators.
func (r *run) prepare(sess *kanban.Session) (*launch, error) {
	ctx := r.ctx
	r.setState(kanban.SessionStarting)
	l := &launch{stderr: newTailBuffer(stderrKeep)}
	var err error
	if l.task, err = r.m.store.GetTask(ctx, sess.TaskID); err != nil {
		return nil, errors.New("the session's task could not be read")
	}
	if sess.AgentProfileID == "" {
		return nil, errors.New("the session has no agent profile")
	}
	prof, err := r.m.store.GetAgentProfile(ctx, sess.AgentProfileID)
	if err != nil {
		return nil, errors.New("the session's agent profile no longer exists")
	}
	l.autoApprove = prof.AutoApprove
	agent, err := r.m.store.GetAgent(ctx, prof.AgentID)
	if err != nil {
		return nil, errors.New("the agent profile's agent no longer exists")
	}
	l.agent = agent.Name
	if err := r.m.resolveType(l, prof.Model); err != nil {
		return nil, err
	}
	dirType, err := r.placement(ctx, sess, l)
	if err != nil {
		return nil, err
	}
	if l.workdir, err = r.m.workdirs.prepare(ctx, l.task, dirType); err != nil {
		return nil, err
	}
	l.cwd = l.workdir
	r.m.update(ctx, r.id, kanban.RunUpdate{Workdir: &l.workdir})
	if l.token, err = r.m.store.RotateSessionToken(ctx, r.id); err != nil {
		return nil, errors.New("could not mint the session's token")
	}
	if l.tokenFile, err = r.m.tokens.write(r.id, l.token); err != nil {
		r.m.log.ErrorContext(r.ctx, "write the session's token file", "err", err)
		return nil, errTokenFile
	}
	l.redact = newRedactor(l.env, append(typeSecrets(&l.typ), l.token, r.m.cfg.OperatorToken)...)
	if err := r.startHost(l); err != nil {
		return nil, err
	}
	var dropped []string
	if l.servers, dropped, err = r.m.mcpServers(ctx, r.id, prof, l); err != nil {
		return nil, err
	}
	for _, why := range dropped {
		r.rec.note("error", why)
		r.m.log.WarnContext(r.ctx, "MCP server not given to the agent", "why", why)
	}
	if err := r.startContainer(l); err != nil {
		return nil, err
	}
	if l.executor != nil && l.executor.PrepareScript != "" {
		if err := r.script(l, "prepare", l.executor.PrepareScript); err != nil {
			return nil, fmt.Errorf("the executor's prepare script failed: %w", err)
		}
	}
	return l, nil
}

// executor resolves the session's executor profile into l and returns the
// type of its executor (local without a profile). A profile or executor
// that cannot be read fails the start: the agent never runs somewhere
// else than where its profile says.
func (r *run) executor(ctx context.Context, sess *kanban.Session, l *launch) (string, error) {
	if sess.ExecutorProfileID == "" {
		return executorLocal, nil
	}
	var err error
	if l.executor, err = r.m.store.GetExecutorProfile(ctx, sess.ExecutorProfileID); err != nil {
		return "", errors.New("the session's executor profile no longer exists")
	}
	ex, err := r.m.store.GetExecutor(ctx, l.executor.ExecutorID)
	switch {
	case kanban.ErrorCode(err) == kanban.CodeNotFound:
		return "", errors.New("the executor profile's executor no longer exists")
	case err != nil:
		r.m.log.ErrorContext(r.ctx, "read the session's executor", "err", err)
		return "", errors.New("the executor profile's executor could not be read")
	}
	return ex.Type, nil
}

// start starts the agent process in the working directory, connects ACP
// to it and publishes the launch.
func (r *run) start(l *launch) error {
	if r.host != nil { // ACP over the SSH session's stdio
		stdin, stdout, err := r.startRemote(l)
		if err != nil {
			return err
		}
		r.connect(l, stdin, stdout)
		return nil
	}
	path := l.command.Path
	var cmd *exec.Cmd
	switch {
	case r.box != nil && path == selfCommand:
		path = docker.BinaryPath
		fallthrough
	case r.box != nil: // ACP over docker exec's stdio; the container holds the environment
		cmd = r.box.c.Exec(r.box.id, l.workdir, nil, append([]string{path}, l.command.Args...)...)
		cmd.Dir = l.workdir
	default:
		if path == selfCommand {
			path = r.m.cfg.Executable
		}
		cmd = exec.Command(path, l.command.Args...) //nolint:gosec // server-side launch metadata only; no payload reaches it
		cmd.Dir, cmd.Env = l.workdir, l.env
	}
	cmd.Stderr = l.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("start the agent: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("start the agent: %w", err)
	}
	if l.proc, err = startProcess(cmd); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("agent type %s is not installed (%s not found).%s", l.agent, filepath.Base(path), l.typ.hint())
		}
		return fmt.Errorf("start the agent (%s): %w", filepath.Base(path), errors.Unwrap(err))
	}
	r.connect(l, stdin, stdout)
	return nil
}

// connect connects ACP to the started agent's stdio and publishes the
// launch.
func (r *run) connect(l *launch, stdin io.Writer, stdout io.Reader) {
	l.order = newUpdateOrder()
	// The connection's goroutines start here: everything of l they read
	// is set above.
	l.conn = acp.NewClientSideConnection(&client{r: r, l: l}, stdin, l.order.reader(stdout, l.proc.done))
	l.conn.SetLogger(newRunLog(r.m.acpLog.Handler(), r))
	r.launched.Store(l)
}

// open initializes the ACP connection and creates (or, resuming, loads)
// the agent's session.
func (r *run) open(l *launch, sess *kanban.Session) error {
	ctx, cancel := context.WithTimeout(r.ctx, r.m.cfg.StartTimeout)
	defer cancel()
	init, err := l.conn.Initialize(ctx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo:      &acp.Implementation{Name: "kandev", Version: r.m.cfg.Version},
	})
	if err != nil {
		return r.startError("initialize", ctx, err, l)
	}
	servers, skipped := forAgent(l.servers, init.AgentCapabilities.McpCapabilities.Http)
	r.turn.mu.Lock()
	r.turn.servers, r.turn.canClose = servers, init.AgentCapabilities.SessionCapabilities.Close != nil
	r.turn.mu.Unlock()
	for _, name := range skipped {
		r.rec.note("status", "MCP server "+kanban.Clip(name, 100)+" was not given to the agent: it does not support HTTP MCP servers.")
	}
	if r.resume && sess.AgentSessionID != "" && init.AgentCapabilities.LoadSession {
		r.loading.Store(true)
		loaded, err := l.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: acp.SessionId(sess.AgentSessionID), Cwd: l.cwd, McpServers: servers})
		r.loading.Store(false)
		if err != nil {
			return r.startError("session/load", ctx, err, l)
		}
		r.turn.mu.Lock()
		r.turn.agentSID, r.turn.modes = acp.SessionId(sess.AgentSessionID), newSessionModes(loaded.Modes)
		r.turn.mu.Unlock()
		if err := r.selectModel(ctx, l, acp.SessionId(sess.AgentSessionID), loaded.Models, loaded.ConfigOptions, loaded.Modes); err != nil {
			return err
		}
		r.rec.note("status", "Resumed the agent's session after a backend restart (ACP session/load); a turn in progress then was interrupted.")
		return nil
	}
	if r.resume && sess.AgentSessionID != "" {
		return errors.New("backend restarted, and the agent cannot load its earlier session")
	}
	ns, err := l.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: l.cwd, McpServers: servers})
	if err != nil {
		return r.startError("session/new", ctx, err, l)
	}
	r.openedSession(ns.SessionId, ns.Modes)
	if err := r.selectModel(ctx, l, ns.SessionId, ns.Models, ns.ConfigOptions, ns.Modes); err != nil {
		return err
	}
	// A fresh session needs no context reset, and starts in the modes of
	// its step's on_enter when no automation has set any yet.
	if _, err := r.m.store.TakeReset(r.ctx, l.task.ID, r.id); err != nil && !r.stopped() {
		r.m.log.ErrorContext(r.ctx, "take context reset", "err", err)
	}
	r.entryModes(l)
	return nil
}

// startError explains why the agent did not start: a timeout, an exit, or
// the agent's own error (its message, redacted and clipped).
func (r *run) startError(step string, ctx context.Context, err error, l *launch) error {
	if processExited(l.proc) {
		if l.typ.Detect() == DetectACP {
			return fmt.Errorf("the agent exited during %s; is it installed?%s", step, l.typ.hint())
		}
		return fmt.Errorf("the agent exited during %s", step)
	}
	if ctx.Err() != nil && !r.stopped() {
		return fmt.Errorf("the agent did not answer %s within %s", step, r.m.cfg.StartTimeout)
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		return fmt.Errorf("the agent refused %s: %s", step, kanban.Clip(l.redact.String(re.Message), 500))
	}
	return fmt.Errorf("the agent failed during %s", step)
}
