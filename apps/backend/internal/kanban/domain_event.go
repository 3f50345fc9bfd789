package kanban

import "sync"

// DomainEvent is something that happened on the board that another part
// of the same backend reacts to: a task arrived on a step, a step may have
// room, an agent turn started or ended. The action layer and the agent
// runtime emit them; the workflow engine reacts. Unlike the notifications
// published to subscribers, domain events never leave the process.
type DomainEvent interface{ domainEvent() }

// TaskCreated says a task arrived on its first step.
type TaskCreated struct{ Task *Task }

// TaskMoved says a task left FromStepID for its current step.
type TaskMoved struct {
	Task       *Task
	FromStepID string
}

// StepFreed says a step may have room now (a task was archived or
// deleted, its settings changed).
type StepFreed struct{ StepID string }

// TaskEnded says a task's state became terminal (COMPLETED, FAILED or
// CANCELLED) through the action layer.
type TaskEnded struct{ Task *Task }

// TaskReleased says a task's agents were all stopped — the task was
// stopped, archived or being deleted — so that what else runs for it (the
// operator's terminals) ends too.
type TaskReleased struct{ TaskID string }

// PullRequestCommented says a reviewer commented on a pull request of TaskID (the
// PR watcher saw it; each comment once).
type PullRequestCommented struct {
	TaskID        string
	PullRequestID string
}

// PullRequestMerged says a task's pull request is now merged: emitted once per
// pull request, by whoever recorded its move to merged in the store (a merge
// made through Kandev, a read that found it merged on the forge, or the PR
// watcher). The workflow engine runs the on_pr_merged automations of the
// task's step.
type PullRequestMerged struct {
	TaskID        string
	PullRequestID string
}

// TaskCommented says a comment was added to a task (by the operator or an
// agent): the workflow engine runs the on_comment automations of the
// task's step. Comment.ID keys the wakes it causes, so one comment never
// queues two runs for one target.
type TaskCommented struct{ Comment *Comment }

// ApprovalResolved says the participants of a task's step reached its
// quorum (Outcome approved or rejected) and the task was moved on: the
// workflow engine runs the on_approval_resolved automations of StepID.
type ApprovalResolved struct {
	TaskID  string
	StepID  string
	Outcome string
}

// AgentFailed says an agent session of a task failed: the workflow
// engine runs the on_agent_error automations of the task's step, once
// per session.
type AgentFailed struct {
	TaskID    string
	SessionID string
}

// PRChange is a pull request state change a notification tells of.
type PRChange string

// Pull request state changes.
const (
	PRChangeMerged           PRChange = "merged"
	PRChangeClosed           PRChange = "closed"
	PRChangeChecksFailing    PRChange = "checks_failing"
	PRChangeChecksPassing    PRChange = "checks_passing"
	PRChangeApproved         PRChange = "approved"
	PRChangeChangesRequested PRChange = "changes_requested"
)

// PullRequestStateChanged says a task's pull request changed state (the
// PR watcher saw it, or a merge through Kandev recorded it). Key names the
// change for deduplication, within the pull request: a merge is one key;
// checks and review verdicts are keyed by the head they are of; a close
// by the watcher's event.
type PullRequestStateChanged struct {
	PR     PullRequest
	Change PRChange
	Key    string
	// Detail is a short safe text to show with it (the failing check's
	// name, the reviewer's login); may be empty.
	Detail string
}

// PullRequestsChanged says a task's pull requests changed: one was linked
// to it, or their automation switches changed. The PR watcher looks at
// them at once (whoever links a pull request emits it).
type PullRequestsChanged struct{ TaskID string }

// PullRequestPolled says a poll of the PR watcher recorded a change of
// what a pull request shows (state, head, checks, review, mergeable,
// title): the board's badges are redrawn from it.
type PullRequestPolled struct {
	TaskID        string
	PullRequestID string
}

func (PullRequestPolled) domainEvent()       {}
func (PullRequestsChanged) domainEvent()     {}
func (PullRequestStateChanged) domainEvent() {}
func (TaskEnded) domainEvent()               {}
func (TaskCommented) domainEvent()           {}
func (ApprovalResolved) domainEvent()        {}
func (AgentFailed) domainEvent()             {}
func (TaskReleased) domainEvent()            {}
func (PullRequestCommented) domainEvent()    {}
func (PullRequestMerged) domainEvent()       {}
func (TaskCreated) domainEvent()             {}
func (TaskMoved) domainEvent()               {}
func (StepFreed) domainEvent()               {}
func (TurnEvent) domainEvent()               {}

// DomainEvents hands every domain event emitted to the reactions
// subscribed, in the order they subscribed, on the emitter's goroutine.
// A reaction must return at once (it queues its work), since the emitter
// may be serving a request. The composition root makes one, before the
// parts that emit or react.
type DomainEvents struct {
	mu        sync.RWMutex
	reactions []func(DomainEvent)
}

// React subscribes fn to every event emitted from now on.
func (d *DomainEvents) React(fn func(DomainEvent)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reactions = append(d.reactions, fn)
}

// Emit hands ev to every reaction.
func (d *DomainEvents) Emit(ev DomainEvent) {
	d.mu.RLock()
	reactions := d.reactions
	d.mu.RUnlock()
	for _, fn := range reactions {
		fn(ev)
	}
}
