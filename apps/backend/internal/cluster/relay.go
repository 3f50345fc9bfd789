package cluster

import (
	"context"
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The signals a Relay sends to the other backends.
const (
	sigDeliver    = "agents.deliver"
	sigStopped    = "agents.stopped"
	sigWaiting    = "agents.waiting"
	sigPermission = "agents.permission_resolved"
	sigMode       = "agents.mode_changed"
)

// modeChanger is the runtime's side of the workflow engine's mode changes
// (flow.Agents).
type modeChanger interface{ ModeChanged(taskID string) }

// Relay is the action.Agents of a backend that shares its database: what
// the action layer tells the runtime goes to this backend's runtime (when
// it runs agents) and, as a signal, to every other backend's, because the
// agent may run on any of them (a runtime ignores sessions it does not
// run). New sessions start on the backend that created them, which owns
// them from then on.
type Relay struct {
	local action.Agents // nil: this backend runs no agents
	bus   *Bus
}

var _ action.Agents = (*Relay)(nil)

// NewRelay returns the Relay of local (nil when this backend runs no
// agents) and registers the signals it answers on bus.
func NewRelay(local action.Agents, bus *Bus) *Relay {
	r := &Relay{local: local, bus: bus}
	if local == nil {
		return r
	}
	type deliver struct {
		SessionID string `json:"session_id"`
		Interrupt bool   `json:"interrupt"`
	}
	on := func(name string, fn func(json.RawMessage) error) {
		bus.Handle(name, func(p json.RawMessage) {
			if err := fn(p); err != nil {
				bus.log.Warn("cluster: bad signal", "signal", name)
			}
		})
	}
	on(sigDeliver, func(p json.RawMessage) error {
		var d deliver
		err := json.Unmarshal(p, &d)
		if err == nil {
			local.Deliver(d.SessionID, d.Interrupt)
		}
		return err
	})
	on(sigStopped, func(p json.RawMessage) error {
		var ids []string
		err := json.Unmarshal(p, &ids)
		if err == nil {
			local.Stopped(ids)
		}
		return err
	})
	on(sigWaiting, func(p json.RawMessage) error {
		var w struct {
			SessionID string `json:"session_id"`
			Delta     int    `json:"delta"`
		}
		err := json.Unmarshal(p, &w)
		if err == nil {
			local.Waiting(w.SessionID, w.Delta)
		}
		return err
	})
	if mc, ok := local.(modeChanger); ok {
		on(sigMode, func(p json.RawMessage) error {
			var taskID string
			err := json.Unmarshal(p, &taskID)
			if err == nil {
				mc.ModeChanged(taskID)
			}
			return err
		})
	}
	on(sigPermission, func(p json.RawMessage) error {
		var id string
		err := json.Unmarshal(p, &id)
		if err == nil {
			local.PermissionResolved(id)
		}
		return err
	})
	return r
}

// Launches reports whether this backend runs agents: a backend that runs
// none creates sessions for agents connected by hand, as alone.
func (r *Relay) Launches() bool { return r.local != nil }

// Start starts a new session's agent here (the creating backend owns it).
func (r *Relay) Start(sess *kanban.Session) {
	if r.local != nil {
		r.local.Start(sess)
	}
}

// Deliver tells the session's agent, wherever it runs, of pending prompts.
func (r *Relay) Deliver(sessionID string, interrupt bool) {
	if r.local != nil {
		r.local.Deliver(sessionID, interrupt)
	}
	r.bus.Signal(sigDeliver, map[string]any{"session_id": sessionID, "interrupt": interrupt})
}

// Stopped stops the agents of cancelled sessions, wherever they run.
func (r *Relay) Stopped(sessionIDs []string) {
	if r.local != nil {
		r.local.Stopped(sessionIDs)
	}
	r.bus.Signal(sigStopped, sessionIDs)
}

// Waiting counts a question of the session opening or closing, wherever
// its agent runs.
func (r *Relay) Waiting(sessionID string, delta int) {
	if r.local != nil {
		r.local.Waiting(sessionID, delta)
	}
	r.bus.Signal(sigWaiting, map[string]any{"session_id": sessionID, "delta": delta})
}

// PermissionResolved wakes the agent waiting on the permission, wherever
// it runs.
func (r *Relay) PermissionResolved(id string) {
	if r.local != nil {
		r.local.PermissionResolved(id)
	}
	r.bus.Signal(sigPermission, id)
}

// ModeChanged tells the runtime running the task's agent, wherever it
// runs, that the workflow changed the task's plan or session mode.
func (r *Relay) ModeChanged(taskID string) {
	if mc, ok := r.local.(modeChanger); ok {
		mc.ModeChanged(taskID)
	}
	r.bus.Signal(sigMode, taskID)
}

// ReleaseTask frees what this backend's runtime holds for the task (its
// git worktree lives on the machine of the backend that made it).
func (r *Relay) ReleaseTask(ctx context.Context, taskID string) error {
	if r.local == nil {
		return nil
	}
	return r.local.ReleaseTask(ctx, taskID)
}
