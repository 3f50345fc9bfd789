package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Agents is the agent runtime as the rest of the backend sees it: the
// action layer and the workflow engine (through the Service) tell it what
// changed, and on a shared database the cluster relays it to the backend
// that runs the agent. It never reaches back into them. Every method but
// ReleaseTask returns at once.
type Agents interface {
	// Launches reports whether this backend runs agents. Without, the
	// sessions tasks start are rows for agents an operator connects by
	// hand.
	Launches() bool
	// Start runs, or queues, the agent of a managed session just created
	// (owned by this backend: its owner is written with it).
	Start(sess *kanban.Session)
	// Deliver tells the session's agent that prompt messages are pending;
	// with interrupt, its current turn is cancelled first.
	Deliver(sessionID string, interrupt bool)
	// Stopped stops the agents of sessions that were just cancelled.
	Stopped(sessionIDs []string)
	// Waiting counts a question of the session opening (+1) or closing (-1).
	Waiting(sessionID string, delta int)
	// PermissionResolved wakes the agent waiting on the permission.
	PermissionResolved(id string)
	// ModeChanged tells the task's agents that its agent mode (plan mode,
	// session mode, a context reset) changed: each applies it before its
	// next turn, an idle one at once.
	ModeChanged(taskID string)
	// ReleaseTask frees what the runtime holds for a task (its git
	// worktree) once the task is archived or before it is deleted.
	ReleaseTask(ctx context.Context, taskID string) error
	// Detect returns every agent type this backend launches with its
	// detection (probed first with refresh, or when never probed; bounded)
	// and the models and modes its sessions offered. Unlike the other
	// methods it may take a while.
	Detect(ctx context.Context, refresh bool) []kanban.AgentDetection
	// AddWorktree makes the task's git worktree of the repository of a
	// link about to be written when the task already works in worktrees
	// (nil when it does not: its next exec-worktree session makes them
	// all).
	AddWorktree(ctx context.Context, t *kanban.Task, l kanban.TaskRepository) (*kanban.Worktree, error)
}

// NoAgents is the Agents of a backend that launches no agents: sessions
// are rows for agents an operator connects by hand. Test doubles embed it.
type NoAgents struct{}

var _ Agents = NoAgents{}

// Launches is false: no agent runs here.
func (NoAgents) Launches() bool { return false }

// Start does nothing.
func (NoAgents) Start(*kanban.Session) {}

// Deliver does nothing.
func (NoAgents) Deliver(string, bool) {}

// Stopped does nothing.
func (NoAgents) Stopped([]string) {}

// Waiting does nothing.
func (NoAgents) Waiting(string, int) {}

// PermissionResolved does nothing.
func (NoAgents) PermissionResolved(string) {}

// ModeChanged does nothing.
func (NoAgents) ModeChanged(string) {}

// Detect knows no agent type: none is launched here.
func (NoAgents) Detect(context.Context, bool) []kanban.AgentDetection { return nil }

// ReleaseTask holds nothing to free.
func (NoAgents) ReleaseTask(context.Context, string) error { return nil }

// AddWorktree makes none: no session of this backend works in worktrees.
func (NoAgents) AddWorktree(context.Context, *kanban.Task, kanban.TaskRepository) (*kanban.Worktree, error) {
	return nil, nil
}
