package kanban

import (
	"context"
	"fmt"
	"time"
)

// A managed session's state decides its task's state. taskStateOf maps a
// session state to the task state it implies and how strongly: while
// several sessions of one task are live, the most urgent one wins
// (waiting for a person > working > turn ended).
func taskStateOf(s SessionState) (TaskState, int) {
	switch s {
	case SessionWaitingForInput:
		return TaskWaitingForInput, 3
	case SessionStarting, SessionRunning:
		return TaskInProgress, 2
	case SessionIdle, SessionCompleted:
		return TaskReview, 1
	case SessionFailed:
		return TaskFailed, 1
	case SessionCancelled:
		return TaskCancelled, 1
	}
	return "", 0 // CREATED and QUEUED imply nothing
}

// StoppedAs is the session state that stands, for TaskStateForSessions,
// for managed sessions someone stopped while they were in the states was.
// Stopping an agent in the middle of its work (starting, running, waiting
// for a person) cancels that work: CANCELLED, so the task says so.
// Stopping an agent at rest after its turn interrupts nothing: as for an
// agent that exits, COMPLETED (the task stays for review). Stopping one
// that never started (created, queued) implies nothing.
func StoppedAs(was []SessionState) SessionState {
	out := SessionQueued
	for _, s := range was {
		switch s {
		case SessionStarting, SessionRunning, SessionWaitingForInput:
			return SessionCancelled
		case SessionIdle:
			out = SessionCompleted
		}
	}
	return out
}

// TaskStateForSessions returns the state a task takes when one of its
// managed sessions moves to changed, given the states of its managed
// sessions that are still live afterwards (changed included when it is
// live). ok is false when the task keeps its current state.
//
// The rules: a live session that waits for a person makes the task
// WAITING_FOR_INPUT; else one that works makes it IN_PROGRESS; else the
// changed session decides: idle or completed → REVIEW, failed → FAILED,
// cancelled (stopped mid-work, see StoppedAs) → CANCELLED. A task someone set to COMPLETED or CANCELLED keeps that state
// unless an agent starts working on it again.
func TaskStateForSessions(current TaskState, changed SessionState, live []SessionState) (TaskState, bool) {
	best, rank := TaskState(""), 0
	for _, s := range live {
		if st, r := taskStateOf(s); r > rank && r > 1 {
			best, rank = st, r
		}
	}
	if rank == 0 {
		best, rank = taskStateOf(changed)
	}
	if rank == 0 || best == current {
		return current, false
	}
	if rank == 1 && (current == TaskCompleted || current == TaskCancelled) {
		return current, false
	}
	return best, true
}

// RunUpdate changes a managed session's run fields; nil fields are kept.
type RunUpdate struct {
	State          SessionState
	Workdir        *string
	AgentSessionID *string
	ExitCode       *int
	Error          *string
}

// Permission states.
const (
	PermissionPending   = "pending"
	PermissionResolved  = "resolved"
	PermissionCancelled = "cancelled"
	PermissionExpired   = "expired"
)

// PermissionStates lists the permission states.
var PermissionStates = []string{PermissionPending, PermissionResolved, PermissionCancelled, PermissionExpired}

// PermissionAnyState is the status filter of a permission listing that
// lists requests in every state.
const PermissionAnyState = "all"

// Bounds of a permission request (what an agent may put in one) and of the
// operator's answer to it.
const (
	MaxPermissionTitleLen = 500 // a title or an option's name (cut, not refused)
	MaxPermissionIDLen    = 200 // the agent's pending id, an option's id or kind
	MaxPermissionOptions  = 10  // options of one request
)

// Permission is an agent's request to run a tool call, waiting for an
// operator (or answered by the profile's auto-approve).
type Permission struct {
	// ID is Kandev's request id (the reference's request_id).
	ID string `json:"request_id"`
	// PendingID is the agent's id for what it asks about (its tool call id).
	PendingID   string             `json:"pending_id"`
	SessionID   string             `json:"session_id"`
	TaskID      string             `json:"task_id"`
	WorkspaceID string             `json:"workspace_id"`
	Title       string             `json:"title"`
	Kind        string             `json:"kind,omitempty"`
	Options     []PermissionOption `json:"options"`
	State       string             `json:"status"`
	OptionID    string             `json:"option_id,omitempty"`
	ResolvedBy  string             `json:"resolved_by,omitempty"`
	CreatedAt   time.Time          `json:"created_at"`
	ResolvedAt  *time.Time         `json:"resolved_at,omitempty"`
	// MessageID is the conversation message that tells of the request,
	// rewritten with its outcome ("" when none was recorded).
	MessageID string `json:"-"`
}

// PermissionOption is one choice the agent offered.
type PermissionOption struct {
	OptionID string `json:"option_id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// PermissionFilter selects permissions. Empty fields do not filter.
type PermissionFilter struct {
	WorkspaceID string
	TaskID      string
	SessionID   string
	State       string
}

// Worktree is a git worktree an exec-worktree session of a task works in:
// one per repository of the task.
type Worktree struct {
	TaskID       string    `json:"task_id"`
	RepositoryID string    `json:"repository_id"`
	Path         string    `json:"path"`
	Branch       string    `json:"branch"`
	CreatedAt    time.Time `json:"created_at"`
}

// RunService is what the agent runtime stores about the sessions it runs.
type RunService interface {
	// UpdateRun applies u to a managed session and, in the same
	// transaction, moves its task to the state TaskStateForSessions gives.
	// It returns the session and, when the task's state changed, the task.
	// A session that has ended is not changed (CONFLICT).
	UpdateRun(ctx context.Context, sessionID string, u RunUpdate) (*Session, *Task, error)
	// LiveManagedSessions lists managed sessions that have not ended,
	// oldest first (what a restarted backend resumes).
	LiveManagedSessions(ctx context.Context, p Page) (*List[Session], error)
	// UpdateMessage replaces a message's content (a streamed message that
	// grew, a tool call whose status changed).
	UpdateMessage(ctx context.Context, id, content string) (*Message, error)
	// PendingPrompts returns the session's oldest prompt messages not yet
	// delivered to its agent (at most limit; none when none is pending).
	PendingPrompts(ctx context.Context, sessionID string, limit int) ([]Message, error)
	// MarkDelivered records that the agent received every prompt up to
	// and including messageID.
	MarkDelivered(ctx context.Context, sessionID, messageID string) error

	CreatePermission(ctx context.Context, p Permission) (*Permission, error)
	GetPermission(ctx context.Context, id string) (*Permission, error)
	ListPermissions(ctx context.Context, f PermissionFilter, p Page) (*List[Permission], error)
	// ResolvePermission records the chosen option if the permission is
	// still pending; claimed is false when it was already closed.
	ResolvePermission(ctx context.Context, id, optionID, by string) (p *Permission, claimed bool, err error)
	// ClosePermission moves a pending permission to state (cancelled or
	// expired); closed is false when it was no longer pending.
	ClosePermission(ctx context.Context, id, state string) (p *Permission, closed bool, err error)

	// SaveWorktree records (or replaces) a task's worktree of one of its
	// repositories.
	SaveWorktree(ctx context.Context, w Worktree) error
	// GetWorktree returns a task's worktree of a repository (NOT_FOUND).
	GetWorktree(ctx context.Context, taskID, repositoryID string) (*Worktree, error)
	// ListWorktrees returns a task's worktrees, oldest first (at most
	// MaxTaskWorktrees).
	ListWorktrees(ctx context.Context, taskID string) ([]Worktree, error)
	// DeleteWorktree forgets a task's worktree of a repository.
	DeleteWorktree(ctx context.Context, taskID, repositoryID string) error

	// ClaimOrphans makes backend the owner of up to limit live managed
	// sessions whose owner's lease lapsed before since (or that have none),
	// oldest first, and returns them. Each is claimed by one backend only.
	ClaimOrphans(ctx context.Context, backend string, since time.Time, limit int) ([]Session, error)
}

// Admission is a task the admission of a step moved onto it.
type Admission struct {
	Task       *Task
	FromStepID string
	// Pulled: the task came through the step's pull_from_step_id rather
	// than from its admission queue.
	Pulled bool
}

// FlowService is what the workflow engine stores.
type FlowService interface {
	// QueueTask puts a task in the admission queue of a full step of its
	// workflow (it stays on its step meanwhile).
	QueueTask(ctx context.Context, taskID, stepID string) (*Task, error)
	// AdmitNext moves one waiting task onto the step when it has room: the
	// longest queued, else the longest on its pull_from_step_id step that
	// arrived there by arrivedBy; nil when the step is full or nothing
	// waits.
	AdmitNext(ctx context.Context, stepID string, arrivedBy time.Time) (*Admission, error)
	// PullingSteps returns the ids of the steps that pull from stepID
	// (their pull_from_step_id), in board order.
	PullingSteps(ctx context.Context, stepID string) ([]string, error)
	// DueForArchive returns up to limit live tasks that stayed on a step
	// with auto_archive_after_hours longer than that at now.
	DueForArchive(ctx context.Context, now time.Time, limit int) ([]Task, error)
	// DueHeartbeats returns up to limit live tasks on a step with
	// heartbeat_minutes whose next heartbeat is due at now.
	DueHeartbeats(ctx context.Context, now time.Time, limit int) ([]HeartbeatDue, error)
	// ClaimHeartbeat records d's heartbeat as fired at at unless another
	// sweep did, or the task moved, was archived or deleted (false).
	ClaimHeartbeat(ctx context.Context, d HeartbeatDue, at time.Time) (bool, error)
	// ClaimQuorum claims the resolution of the quorum of a task's visit
	// of a step (the visit that began at entered): true once per visit.
	ClaimQuorum(ctx context.Context, taskID, stepID string, entered time.Time) (bool, error)
	// ReleaseQuorum undoes the claim of the visit that began at entered
	// (its resolution failed, or its decisions were cleared).
	ReleaseQuorum(ctx context.Context, taskID string, entered time.Time) error
}

// HeartbeatText is what the agents an on_heartbeat queue_run wakes are
// told.
func HeartbeatText(minutes int) string {
	every := fmt.Sprintf("every %d minutes", minutes)
	if minutes == 1 {
		every = "every minute"
	}
	return "Heartbeat: " + every + " a task stays on this step (heartbeat_minutes)."
}

// HeartbeatDue is a task whose next heartbeat on its step is due: the
// step and arrival it is for, and the heartbeat before it (nil: none on
// this visit).
type HeartbeatDue struct {
	TaskID        string
	StepID        string
	StepEnteredAt time.Time
	LastAt        *time.Time
	Minutes       int
}

// TurnEvent is an agent turn starting or ending on a task: a domain event
// the runtime emits and the workflow engine reacts to. StepID is the
// task's step when the turn started.
type TurnEvent struct {
	SessionID  string
	TaskID     string
	StepID     string
	StartedAt  time.Time
	Ended      bool
	StopReason string // end_turn, max_tokens, max_turn_requests, refusal, cancelled, error
}
