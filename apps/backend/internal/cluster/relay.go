package cluster

import (
	"context"
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// signal is one kind of message a Relay sends to the other backends: its
// name on the bus, and T the type of its payload, so that the sending and
// the handling side cannot disagree on either.
type signal[T any] string

// send tells the other backends v.
func (s signal[T]) send(b *Bus, v T) { b.Signal(string(s), v) }

// handle runs fn for every signal s another backend sends (a payload that
// is no T is logged and dropped).
func (s signal[T]) handle(b *Bus, fn func(T)) {
	b.Handle(string(s), func(p json.RawMessage) {
		var v T
		if err := json.Unmarshal(p, &v); err != nil {
			b.log.Warn("cluster: bad signal", "signal", string(s))
			return
		}
		fn(v)
	})
}

// deliverSignal asks the runtime running a session's agent to read its
// pending prompts.
type deliverSignal struct {
	SessionID string `json:"session_id"`
	Interrupt bool   `json:"interrupt"`
}

// waitingSignal counts a question of a session opening or closing.
type waitingSignal struct {
	SessionID string `json:"session_id"`
	Delta     int    `json:"delta"`
}

// The signals a Relay sends to the other backends.
const (
	sigDeliver    signal[deliverSignal] = "agents.deliver"
	sigStopped    signal[[]string]      = "agents.stopped" // session ids
	sigWaiting    signal[waitingSignal] = "agents.waiting"
	sigPermission signal[string]        = "agents.permission_resolved" // permission id
	sigMode       signal[string]        = "agents.mode_changed"        // task id
)

// Relay is the action.Agents of a backend that shares its database: what
// the action layer and the workflow engine tell the runtime goes to this
// backend's runtime (when it runs agents) and, as a signal, to every
// other backend's, because the agent may run on any of them (a runtime
// ignores sessions it does not run). New sessions start on the backend
// that created them, which owns them from then on.
type Relay struct {
	local action.Agents // action.NoAgents: this backend runs no agents
	bus   *Bus
}

var _ action.Agents = (*Relay)(nil)

// NewRelay returns the Relay of local (action.NoAgents when this backend
// runs no agents) and, when local launches agents, registers the signals
// it answers on bus.
func NewRelay(local action.Agents, bus *Bus) *Relay {
	r := &Relay{local: local, bus: bus}
	if !local.Launches() {
		return r
	}
	sigDeliver.handle(bus, func(d deliverSignal) { local.Deliver(d.SessionID, d.Interrupt) })
	sigStopped.handle(bus, local.Stopped)
	sigWaiting.handle(bus, func(w waitingSignal) { local.Waiting(w.SessionID, w.Delta) })
	sigMode.handle(bus, local.ModeChanged)
	sigPermission.handle(bus, local.PermissionResolved)
	return r
}

// Launches reports whether this backend runs agents: a backend that runs
// none creates sessions for agents connected by hand, as alone.
func (r *Relay) Launches() bool { return r.local.Launches() }

// Start starts a new session's agent here (the creating backend owns it).
func (r *Relay) Start(sess *kanban.Session) { r.local.Start(sess) }

// Deliver tells the session's agent, wherever it runs, of pending prompts.
func (r *Relay) Deliver(sessionID string, interrupt bool) {
	r.local.Deliver(sessionID, interrupt)
	sigDeliver.send(r.bus, deliverSignal{SessionID: sessionID, Interrupt: interrupt})
}

// Stopped stops the agents of cancelled sessions, wherever they run.
func (r *Relay) Stopped(sessionIDs []string) {
	r.local.Stopped(sessionIDs)
	sigStopped.send(r.bus, sessionIDs)
}

// Waiting counts a question of the session opening or closing, wherever
// its agent runs.
func (r *Relay) Waiting(sessionID string, delta int) {
	r.local.Waiting(sessionID, delta)
	sigWaiting.send(r.bus, waitingSignal{SessionID: sessionID, Delta: delta})
}

// PermissionResolved wakes the agent waiting on the permission, wherever
// it runs.
func (r *Relay) PermissionResolved(id string) {
	r.local.PermissionResolved(id)
	sigPermission.send(r.bus, id)
}

// ModeChanged tells the runtime running the task's agent, wherever it
// runs, that the task's plan or session mode changed.
func (r *Relay) ModeChanged(taskID string) {
	r.local.ModeChanged(taskID)
	sigMode.send(r.bus, taskID)
}

// ReleaseTask frees what this backend's runtime holds for the task (its
// git worktree lives on the machine of the backend that made it).
func (r *Relay) ReleaseTask(ctx context.Context, taskID string) error {
	return r.local.ReleaseTask(ctx, taskID)
}

// Detect is this backend's detection: what is installed where its own
// agents run.
func (r *Relay) Detect(ctx context.Context, refresh bool) []kanban.AgentDetection {
	return r.local.Detect(ctx, refresh)
}

// AddWorktree makes the task's worktree of a newly linked repository on
// this backend's machine, where its other worktrees are (the runtime that
// made them serves this backend's sessions).
func (r *Relay) AddWorktree(ctx context.Context, t *kanban.Task, l kanban.TaskRepository) (*kanban.Worktree, error) {
	return r.local.AddWorktree(ctx, t, l)
}
