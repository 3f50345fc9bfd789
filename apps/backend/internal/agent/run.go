package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"

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
// turn by turn, and stopped.
type run struct {
	m  *Manager
	id string
	// resume is set for a session a previous backend process left live.
	resume bool

	stopCtx  context.Context
	stopFunc context.CancelFunc
	stopWhy  atomic.Int32
	wake     chan struct{} // prompts pending
	// interrupts tells the turn in progress that it was cancelled.
	interrupts chan struct{}
	loading    atomic.Bool // replayed updates of session/load are ignored

	autoApprove bool
	rec         *recorder

	mu       sync.Mutex
	info     *launchInfo
	conn     *acp.ClientSideConnection
	agentSID acp.SessionId
	modes    sessionModes
	// servers are the MCP servers the agent's sessions get; canClose:
	// the agent supports session/close.
	servers    []acp.McpServer
	canClose   bool
	turnActive bool
	waits      int
	state      kanban.SessionState
	idleSince  time.Time
	exited     chan struct{} // closed when the agent process exited
	// failure, once set, is why the run ends FAILED (watchdog.go).
	failure string
	// lastSeen is when the agent last sent an ACP message (unix nanos).
	lastSeen atomic.Int64
	// aborted is closed when the run must end as FAILED at once (abort).
	aborted   chan struct{}
	abortOnce sync.Once
	// order keeps permission requests behind the updates the agent wrote
	// before them (order.go); one per launched process.
	order atomic.Pointer[updateOrder]
}

func newRun(m *Manager, id string, resume bool) *run {
	r := &run{m: m, id: id, resume: resume, wake: make(chan struct{}, 1), interrupts: make(chan struct{}, 1), state: kanban.SessionQueued,
		aborted: make(chan struct{})}
	r.stopCtx, r.stopFunc = context.WithCancel(context.Background())
	return r
}

// taskID is the run's task ("" before the run read its session).
func (r *run) taskID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.info == nil || r.info.task == nil {
		return ""
	}
	return r.info.task.ID
}

// stop asks the run to end for why; the first reason wins.
func (r *run) stop(why stopMode) {
	r.stopWhy.CompareAndSwap(int32(stopNone), int32(why))
	r.stopFunc()
}

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
	r.mu.Lock()
	conn, sid, active := r.conn, r.agentSID, r.turnActive
	r.mu.Unlock()
	if active && conn != nil {
		_ = conn.Cancel(context.Background(), acp.CancelNotification{SessionId: sid})
		select {
		case r.interrupts <- struct{}{}:
		default:
		}
	}
}

// setState records a state change (and the task state it implies).
func (r *run) setState(st kanban.SessionState) {
	r.mu.Lock()
	if r.state == st {
		r.mu.Unlock()
		return
	}
	r.state = st
	if st == kanban.SessionIdle {
		r.idleSince = time.Now()
	}
	r.mu.Unlock()
	r.m.update(r.id, kanban.RunUpdate{State: st})
}

// inputWait counts a question or permission opening (+1) or closing (-1)
// and moves the session between RUNNING and WAITING_FOR_INPUT.
func (r *run) inputWait(delta int) {
	r.seen() // the silence watchdog counts from the wait's start or end
	r.mu.Lock()
	r.waits += delta
	waiting, active := r.waits > 0, r.turnActive
	r.mu.Unlock()
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != kanban.SessionIdle || r.turnActive {
		return 0, false
	}
	return time.Since(r.idleSince), true
}

// drive runs the session from start to end.
func (r *run) drive() {
	defer r.m.finished(r)
	sess, err := r.m.store.GetSession(context.Background(), r.id)
	if err != nil || sess.State.Ended() {
		return
	}
	r.rec = newRecorder(r.m.store, r.id, r.m.cfg.OutputLimit, r.m.log, r.m.publishMessage)
	defer r.rec.close()
	l, err := r.prepare(sess)
	if err != nil {
		r.fail(err.Error(), nil)
		return
	}
	if r.stopCtx.Err() != nil {
		r.finish(l, nil)
		return
	}
	proc, err := r.launch(l)
	if err != nil {
		r.fail(err.Error(), nil)
		r.cleanup(l)
		return
	}
	if err := r.open(l, sess); err != nil {
		proc.terminate(r.m.cfg.StopGrace)
		r.fail(err.Error(), proc)
		r.cleanup(l)
		return
	}
	r.turns(l, proc)
	r.finish(l, proc)
}

// launchInfo is what a run resolved before launching its agent.
type launchInfo struct {
	task     *kanban.Task
	agent    string
	command  Command
	executor *kanban.ExecutorProfile
	workdir  string
	env      []string
	servers  []profileServer
	token    string
	redact   *redact.Redactor
	stderr   *tailBuffer
}

// prepare resolves the agent and executor, prepares the working directory
// and runs the prepare script.
func (r *run) prepare(sess *kanban.Session) (*launchInfo, error) {
	ctx := context.Background()
	r.setState(kanban.SessionStarting)
	l := &launchInfo{stderr: newTailBuffer(stderrKeep)}
	r.mu.Lock()
	r.info = l
	r.mu.Unlock()
	var err error
	if l.task, err = r.m.store.GetTask(ctx, sess.TaskID); err != nil {
		return nil, errors.New("the session's task could not be read")
	}
	r.mu.Lock()
	r.info = l
	r.mu.Unlock()
	if sess.AgentProfileID == "" {
		return nil, errors.New("the session has no agent profile")
	}
	prof, err := r.m.store.GetAgentProfile(ctx, sess.AgentProfileID)
	if err != nil {
		return nil, errors.New("the session's agent profile no longer exists")
	}
	r.autoApprove = prof.AutoApprove
	agent, err := r.m.store.GetAgent(ctx, prof.AgentID)
	if err != nil {
		return nil, errors.New("the agent profile's agent no longer exists")
	}
	l.agent = agent.Name
	cmd, ok := r.m.cfg.Commands[agent.Name]
	if !ok {
		return nil, errors.New("no launch command is configured for agent type " + agent.Name)
	}
	l.command = cmd
	execType := executorLocal
	if sess.ExecutorProfileID != "" {
		if l.executor, err = r.m.store.GetExecutorProfile(ctx, sess.ExecutorProfileID); err != nil {
			return nil, errors.New("the session's executor profile no longer exists")
		}
		if ex, err := r.m.store.GetExecutor(ctx, l.executor.ExecutorID); err == nil {
			execType = ex.Type
		}
	}
	if l.workdir, err = r.m.workdirs.prepare(ctx, l.task, execType); err != nil {
		return nil, err
	}
	r.m.update(r.id, kanban.RunUpdate{Workdir: &l.workdir})
	if l.token, err = r.m.store.RotateSessionToken(ctx, r.id); err != nil {
		return nil, errors.New("could not mint the session's token")
	}
	l.env = agentEnv(os.Environ(), r.m.cfg.EnvAllow)
	l.redact = newRedactor(l.env, l.token, r.m.cfg.OperatorToken)
	var dropped []string
	if l.servers, dropped, err = r.m.mcpServers(ctx, r.id, prof, l); err != nil {
		return nil, err
	}
	for _, why := range dropped {
		r.rec.note("error", why)
		r.m.log.Warn("MCP server not given to the agent", "session", r.id, "why", why)
	}
	if l.executor != nil && l.executor.PrepareScript != "" {
		if err := r.script(l, "prepare", l.executor.PrepareScript); err != nil {
			return nil, fmt.Errorf("the executor's prepare script failed: %w", err)
		}
	}
	return l, nil
}

// script runs one executor script and records its output.
func (r *run) script(l *launchInfo, name, script string) error {
	env := append(append([]string{}, l.env...), "KANDEV_TASK_ID="+l.task.ID, "KANDEV_SESSION_ID="+r.id, "KANDEV_WORKDIR="+l.workdir)
	out, err := runScript(r.stopCtx, l.workdir, script, env, r.m.cfg.ScriptTimeout, 16<<10)
	text := "The executor's " + name + " script "
	if err != nil {
		text += "failed (" + err.Error() + ")"
	} else {
		text += "succeeded"
	}
	if out != "" {
		text += ". Output:\n" + l.redact.String(out)
	}
	typ := "status"
	if err != nil {
		typ = "error"
	}
	r.rec.note(typ, text)
	return err
}

// launch starts the agent process in the working directory.
func (r *run) launch(l *launchInfo) (*process, error) {
	path := l.command.Path
	if path == selfCommand {
		path = r.m.cfg.Executable
	}
	cmd := exec.Command(path, l.command.Args...) //nolint:gosec // server-side launch metadata only; no payload reaches it
	cmd.Dir, cmd.Env, cmd.Stderr = l.workdir, l.env, l.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start the agent: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start the agent: %w", err)
	}
	proc, err := startProcess(cmd)
	if err != nil {
		return nil, fmt.Errorf("start the agent (%s): %w", filepath.Base(path), errors.Unwrap(err))
	}
	order := newUpdateOrder()
	r.order.Store(order)
	conn := acp.NewClientSideConnection(r, stdin, order.reader(stdout, proc.done))
	conn.SetLogger(newRunLog(r.m.acpLog.Handler(), r))
	r.mu.Lock()
	r.conn, r.exited = conn, proc.done
	r.mu.Unlock()
	return proc, nil
}

// open initializes the ACP connection and creates (or, resuming, loads)
// the agent's session.
func (r *run) open(l *launchInfo, sess *kanban.Session) error {
	ctx, cancel := context.WithTimeout(r.stopCtx, r.m.cfg.StartTimeout)
	defer cancel()
	init, err := r.conn.Initialize(ctx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo:      &acp.Implementation{Name: "kandev", Version: r.m.cfg.Version},
	})
	if err != nil {
		return r.startError("initialize", ctx, err, l)
	}
	servers, skipped := forAgent(l.servers, init.AgentCapabilities.McpCapabilities.Http)
	r.servers, r.canClose = servers, init.AgentCapabilities.SessionCapabilities.Close != nil
	for _, name := range skipped {
		r.rec.note("status", "MCP server "+kanban.Clip(name, 100)+" was not given to the agent: it does not support HTTP MCP servers.")
	}
	if r.resume && sess.AgentSessionID != "" && init.AgentCapabilities.LoadSession {
		r.loading.Store(true)
		loaded, err := r.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: acp.SessionId(sess.AgentSessionID), Cwd: l.workdir, McpServers: servers})
		r.loading.Store(false)
		if err != nil {
			return r.startError("session/load", ctx, err, l)
		}
		r.mu.Lock()
		r.agentSID, r.modes = acp.SessionId(sess.AgentSessionID), newSessionModes(loaded.Modes)
		r.mu.Unlock()
		r.rec.note("status", "Resumed the agent's session after a backend restart (ACP session/load); a turn in progress then was interrupted.")
		return nil
	}
	if r.resume && sess.AgentSessionID != "" {
		return errors.New("backend restarted, and the agent cannot load its earlier session")
	}
	ns, err := r.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: l.workdir, McpServers: servers})
	if err != nil {
		return r.startError("session/new", ctx, err, l)
	}
	r.openedSession(ns.SessionId, ns.Modes)
	// A fresh session needs no context reset, and starts in the modes of
	// its step's on_enter when no automation has set any yet.
	if _, err := r.m.store.TakeReset(context.Background(), l.task.ID, r.id); err != nil {
		r.m.log.Error("take context reset", "session", r.id, "err", err)
	}
	r.entryModes(l)
	return nil
}

// startError explains why the agent did not start: a timeout, an exit, or
// the agent's own error (its message, redacted and clipped).
func (r *run) startError(step string, ctx context.Context, err error, l *launchInfo) error {
	r.mu.Lock()
	exited := r.exited
	r.mu.Unlock()
	select {
	case <-exited:
		return fmt.Errorf("the agent exited during %s", step)
	default:
	}
	if ctx.Err() != nil && r.stopCtx.Err() == nil {
		return fmt.Errorf("the agent did not answer %s within %s", step, r.m.cfg.StartTimeout)
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		return fmt.Errorf("the agent refused %s: %s", step, kanban.Clip(l.redact.String(re.Message), 500))
	}
	return fmt.Errorf("the agent failed during %s", step)
}
