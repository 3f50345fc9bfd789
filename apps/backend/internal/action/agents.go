package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Agents runs the agents of managed sessions (the runtime). The action
// layer tells it what changed; it never reaches back into the actions.
type Agents interface {
	// Start runs, or queues, the agent of a managed session just created.
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
	// ReleaseTask frees what the runtime holds for a task (its git
	// worktree) once the task is archived or before it is deleted.
	ReleaseTask(ctx context.Context, taskID string) error
}

// noAgents is the Agents of a backend that launches no agents: sessions
// are rows for agents an operator connects by hand.
type noAgents struct{}

func (noAgents) Start(*kanban.Session)                     {}
func (noAgents) Deliver(string, bool)                      {}
func (noAgents) Stopped([]string)                          {}
func (noAgents) Waiting(string, int)                       {}
func (noAgents) PermissionResolved(string)                 {}
func (noAgents) ReleaseTask(context.Context, string) error { return nil }
