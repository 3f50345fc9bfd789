package kanban

import (
	"slices"
	"time"
)

// TaskState is the lifecycle state of a task.
type TaskState string

// Task states, enforced as an enum everywhere.
const (
	TaskTodo            TaskState = "TODO"
	TaskInProgress      TaskState = "IN_PROGRESS"
	TaskReview          TaskState = "REVIEW"
	TaskBlocked         TaskState = "BLOCKED"
	TaskWaitingForInput TaskState = "WAITING_FOR_INPUT"
	TaskCompleted       TaskState = "COMPLETED"
	TaskFailed          TaskState = "FAILED"
	TaskCancelled       TaskState = "CANCELLED"
)

// TaskStates lists every TaskState in display order.
var TaskStates = []TaskState{TaskTodo, TaskInProgress, TaskReview, TaskBlocked, TaskWaitingForInput, TaskCompleted, TaskFailed, TaskCancelled}

// Valid reports whether s is a known state.
func (s TaskState) Valid() bool { return slices.Contains(TaskStates, s) }

// Ended reports whether s is terminal: completed, failed or cancelled.
func (s TaskState) Ended() bool { return s == TaskCompleted || s == TaskFailed || s == TaskCancelled }

// Task is a unit of work on a workflow step.
type Task struct {
	ID             string `json:"id"`
	WorkspaceID    string `json:"workspace_id"`
	WorkflowID     string `json:"workflow_id"`
	WorkflowStepID string `json:"workflow_step_id"`
	ParentID       string `json:"parent_id,omitempty"`
	// CreatedByTaskID is the task whose session created this one (empty
	// when the operator did, or that task was deleted since).
	CreatedByTaskID    string     `json:"created_by_task_id,omitempty"`
	Title              string     `json:"title"`
	Description        string     `json:"description"`
	State              TaskState  `json:"state"`
	Position           int        `json:"position"`
	ExternalID         string     `json:"external_id,omitempty"`
	StartWhenUnblocked bool       `json:"start_when_unblocked"`
	LaunchPrompt       string     `json:"launch_prompt,omitempty"`
	ArchivedAt         *time.Time `json:"archived_at,omitempty"`
	CreatedAt          time.Time  `json:"created_at"`
	UpdatedAt          time.Time  `json:"updated_at"`
	// QueuedForStepID is the full step the task waits to be admitted to
	// (an automation or auto-advance moved it there); QueuedAt since when.
	QueuedForStepID string     `json:"queued_for_step_id,omitempty"`
	QueuedAt        *time.Time `json:"queued_at,omitempty"`
	// StepEnteredAt is when the task arrived on its current step.
	StepEnteredAt time.Time `json:"step_entered_at"`
	// Autopilot tasks never ask the operator: an autopilot subtask asks
	// its direct parent (ask_parent_question_kandev). Fixed at creation.
	Autopilot bool `json:"autopilot"`
	// WorkspaceMode is how the agent's working directory is chosen:
	// inherit_parent (the parent task's), new_workspace or empty (its own).
	WorkspaceMode string `json:"workspace_mode,omitempty"`
	// AgentProfileID and ExecutorProfileID are the profiles kept with the
	// task for every start of an agent on it (chosen at its creation or by
	// task.update); empty: its step's or workflow's, else the default.
	AgentProfileID    string `json:"agent_profile_id,omitempty"`
	ExecutorProfileID string `json:"executor_profile_id,omitempty"`
}

// Workspace modes of a task.
const (
	WorkspaceInheritParent = "inherit_parent"
	WorkspaceNew           = "new_workspace"
)

// Bounds of a task's fields, its repositories and its branches, shared by
// the tool schemas, the action layer and the store.
const (
	MaxPathLen        = 4096      // a filesystem path: a checkout, a folder, a file a review or walkthrough names
	MaxURLLen         = 2048      // a repository's remote URL
	MaxBranchLen      = 255       // a git branch name
	MaxRepoRefLen     = 255       // a repository named by name or id (in an artifact)
	MaxSourcesPerCall = 10        // sources one add_workspace_sources_kandev call attaches
	MaxTaskWorktrees  = 32        // git worktrees of one task (one per repository it works in)
	MaxBlockedBy      = 50        // blockers a task is created with
	MaxTaskPosition   = 1_000_000 // a 0-based board position (larger means the end)
)

// Kinds of workspace sources (add_workspace_sources_kandev).
const (
	SourceRepository = "repository"
	SourceFolder     = "folder"
)

// SourceKinds lists the kinds of workspace sources.
var SourceKinds = []string{SourceRepository, SourceFolder}

// Bounds of list_related_tasks_kandev.
const (
	DefaultRelatedLimit = 20  // tasks per list by default
	MaxRelatedLimit     = 100 // tasks per list at most
)

// Lists of list_related_tasks_kandev, as its truncated field names them.
const (
	RelatedChildren = "children"
	RelatedSiblings = "siblings"
	RelatedBlockers = "blockers"
	RelatedBlocked  = "blocked"
)

// RelatedLists lists the lists of list_related_tasks_kandev.
var RelatedLists = []string{RelatedChildren, RelatedSiblings, RelatedBlockers, RelatedBlocked}

// DependencyDirections are the directions of a task's dependency listing:
// the tasks it waits for (the default) or the tasks waiting for it.
var DependencyDirections = []string{RelatedBlockers, RelatedBlocked}

// TaskCreate is the input of TaskService.CreateTask. The service resolves
// defaults: WorkflowID from the workspace's first workflow, WorkflowStepID
// from the workflow's start step.
type TaskCreate struct {
	WorkspaceID    string
	WorkflowID     string
	WorkflowStepID string
	ParentID       string
	// CreatedByTaskID is the bound task of the session creating it.
	CreatedByTaskID    string
	Title              string
	Description        string
	State              TaskState // default TODO
	ExternalID         string
	BlockedBy          []string
	StartWhenUnblocked bool
	Repository         *TaskRepositoryInput
	// StartAgentProfileID and StartExecutorProfileID are the profiles the
	// task was created with, kept for every later start of an agent on it
	// (a start_agent automation, start_when_unblocked, a spawn naming
	// none); empty: what the task's step or workflow names, else the
	// defaults.
	StartAgentProfileID    string
	StartExecutorProfileID string
	Autopilot              bool
	WorkspaceMode          string
}

// TaskRepositoryInput attaches a repository to a new task. At most one
// locator is set.
type TaskRepositoryInput struct {
	RepositoryID  string
	LocalPath     string
	RepositoryURL string
	BaseBranch    string
}

// TaskUpdate changes the set fields of a task.
type TaskUpdate struct {
	Title        *string
	Description  *string
	State        *TaskState
	LaunchPrompt *string
	// AgentProfileID and ExecutorProfileID replace the profiles kept with
	// the task ("" clears one: the step's, workflow's or default profile).
	AgentProfileID    *string
	ExecutorProfileID *string
}

// TaskFilter selects tasks for ListTasks. WorkspaceID is required.
// With WorkflowStepID the order is the board order (position, id);
// otherwise creation order (created_at, id).
type TaskFilter struct {
	WorkspaceID     string
	WorkflowID      string
	WorkflowStepID  string
	ParentID        string
	State           TaskState
	IncludeArchived bool
}

// TaskDependency is an edge: TaskID is blocked by DependsOnTaskID.
type TaskDependency struct {
	TaskID          string    `json:"task_id"`
	DependsOnTaskID string    `json:"depends_on_task_id"`
	CreatedAt       time.Time `json:"created_at"`
}

// Repository is a code repository known to a workspace.
type Repository struct {
	ID            string    `json:"id"`
	WorkspaceID   string    `json:"workspace_id"`
	Name          string    `json:"name"`
	LocalPath     string    `json:"local_path,omitempty"`
	RemoteURL     string    `json:"remote_url,omitempty"`
	DefaultBranch string    `json:"default_branch"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// TaskRepository links a task to a repository and its branches.
type TaskRepository struct {
	TaskID         string `json:"task_id"`
	RepositoryID   string `json:"repository_id"`
	BaseBranch     string `json:"base_branch"`
	CheckoutBranch string `json:"checkout_branch,omitempty"`
}
