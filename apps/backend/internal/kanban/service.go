package kanban

import (
	"context"
	"encoding/json"
	"time"
)

// The service interfaces below are implemented by the store. Unless a
// method says otherwise it returns *Error with CodeNotFound for missing
// entities, CodeValidation for rule violations (naming the field, never the
// value) and CodeConflict for state conflicts. Mutations are atomic: an
// error leaves no partial rows.

// WorkspaceService manages workspaces.
type WorkspaceService interface {
	CreateWorkspace(ctx context.Context, name, description string) (*Workspace, error)
	GetWorkspace(ctx context.Context, id string) (*Workspace, error)
	ListWorkspaces(ctx context.Context, p Page) (*List[Workspace], error)
	// DefaultWorkspaceID returns the id of the first workspace
	// ListWorkspaces lists (CodeNotFound when there is none).
	DefaultWorkspaceID(ctx context.Context) (string, error)
	UpdateWorkspace(ctx context.Context, id string, name, description *string) (*Workspace, error)
}

// WorkflowService manages workflows and their steps.
type WorkflowService interface {
	CreateWorkflow(ctx context.Context, w Workflow) (*Workflow, error)
	GetWorkflow(ctx context.Context, id string) (*Workflow, error)
	ListWorkflows(ctx context.Context, workspaceID string, p Page) (*List[Workflow], error)
	UpdateWorkflow(ctx context.Context, id string, name, description *string) (*Workflow, error)
	// DeleteWorkflow refuses (CONFLICT) while tasks exist unless cascade.
	DeleteWorkflow(ctx context.Context, id string, cascade bool) error
	// ImportWorkflow creates a workflow and its steps in one transaction.
	ImportWorkflow(ctx context.Context, w Workflow, steps []WorkflowStep) (*Workflow, []WorkflowStep, error)

	// CreateStep appends a step (Position ignored: it goes last). A step
	// with IsStartStep clears the flag on the workflow's other steps.
	CreateStep(ctx context.Context, s WorkflowStep) (*WorkflowStep, error)
	GetStep(ctx context.Context, id string) (*WorkflowStep, error)
	ListSteps(ctx context.Context, workflowID string, p Page) (*List[WorkflowStep], error)
	UpdateStep(ctx context.Context, id string, u StepUpdate) (*WorkflowStep, error)
	// DeleteStep refuses (CONFLICT) while tasks are on the step.
	DeleteStep(ctx context.Context, id string) error
	// ReorderSteps requires stepIDs to be exactly the workflow's steps, once each.
	ReorderSteps(ctx context.Context, workflowID string, stepIDs []string) ([]WorkflowStep, error)
}

// StepUpdate changes the set fields of a step.
type StepUpdate struct {
	Name                  *string
	Color                 *string
	Prompt                *string
	IsStartStep           *bool
	AllowManualMove       *bool
	AutoAdvance           *bool
	WIPLimit              *int
	AutoArchiveAfterHours *int
	HeartbeatMinutes      *int
	// AutoAdvanceRequiresSignal and PullFromStepID ("" clears it).
	AutoAdvanceRequiresSignal  *bool
	CancelTriggersTurnComplete *bool
	ShowInCommandPanel         *bool
	PullFromStepID             *string
	Events                     map[string][]StepAction // nil: unchanged
	// Approval replaces the step's approval when set; ClearApproval
	// removes it.
	Approval      *StepApproval
	ClearApproval bool
}

// TaskService manages tasks and their dependencies.
type TaskService interface {
	// CreateTask creates a task. With ExternalID set and a task with that
	// external id already in the workspace, it returns that task and
	// deduplicated=true without writing anything.
	CreateTask(ctx context.Context, in TaskCreate) (t *Task, deduplicated bool, err error)
	// CreateTaskWithSession creates a task as CreateTask does and, in the
	// same transaction, a session for it as CreateSession does (sc.TaskID
	// is ignored): both are written or neither is. The session's token is
	// not returned (RotateSessionToken issues one). A deduplicated create
	// returns the existing task and no session, and writes nothing.
	CreateTaskWithSession(ctx context.Context, in TaskCreate, sc SessionCreate) (t *Task, sess *Session, deduplicated bool, err error)
	GetTask(ctx context.Context, id string) (*Task, error)
	ListTasks(ctx context.Context, f TaskFilter, p Page) (*List[Task], error)
	// ListTaskSummaries and ListTaskDetails list the tasks ListTasks does,
	// in the same order and with the same cursors, as task.list shows them:
	// summaries (a preview of the prompt) or, verbose, every field; both
	// with their counts.
	ListTaskSummaries(ctx context.Context, f TaskFilter, p Page) (*List[TaskSummary], error)
	ListTaskDetails(ctx context.Context, f TaskFilter, p Page) (*List[TaskDetail], error)
	UpdateTask(ctx context.Context, id string, u TaskUpdate) (*Task, error)
	// UpdateTaskFrom is UpdateTask that also returns the task's state just
	// before the update (read in its transaction): whether the update
	// ended the task or found it ended.
	UpdateTaskFrom(ctx context.Context, id string, u TaskUpdate) (*Task, TaskState, error)
	// MoveTask moves a task to stepID (same workflow) at 0-based position
	// (clamped to the end; -1 means last). Refuses (CONFLICT) when the target
	// step's wip_limit is reached by other tasks.
	MoveTask(ctx context.Context, id, stepID string, position int) (*Task, error)
	// MoveTaskAcross is MoveTask onto a step of another workflow of the
	// task's workspace too (the task joins that workflow).
	MoveTaskAcross(ctx context.Context, id, stepID string, position int) (*Task, error)
	// ArchiveTask is idempotent.
	ArchiveTask(ctx context.Context, id string) (*Task, error)
	// UnarchiveTask puts an archived task back last on its step; it refuses
	// (CONFLICT) when that step's wip_limit is reached, and is idempotent.
	UnarchiveTask(ctx context.Context, id string) (*Task, error)
	// DeleteTask removes the task and cascades its sessions, messages,
	// plans, documents, artifacts and dependency edges; children are detached.
	DeleteTask(ctx context.Context, id string) error
	// AddDependency refuses self edges, cycles and cross-workspace edges.
	// Adding an existing edge succeeds.
	AddDependency(ctx context.Context, taskID, dependsOnID string) (*TaskDependency, error)
	// RemoveDependency succeeds when the edge does not exist.
	RemoveDependency(ctx context.Context, taskID, dependsOnID string) error
	// ListBlockers returns the tasks taskID depends on; ListBlocked those
	// that depend on taskID.
	ListBlockers(ctx context.Context, taskID string, p Page) (*List[Task], error)
	ListBlocked(ctx context.Context, taskID string, p Page) (*List[Task], error)
	// StartProfiles returns the profiles a task was created with, kept for
	// every later start of an agent on it (empty when none were named).
	StartProfiles(ctx context.Context, taskID string) (agentProfileID, executorProfileID string, err error)
	ListTaskRepositories(ctx context.Context, taskID string) ([]TaskRepository, error)
	// SetTaskRepository adds or updates the link of a task to a repository.
	SetTaskRepository(ctx context.Context, tr TaskRepository) (*TaskRepository, error)
}

// SessionService manages sessions, their tokens and conversations.
type SessionService interface {
	// CreateSession creates a session and returns its fresh token (only its
	// hash is stored).
	CreateSession(ctx context.Context, in SessionCreate) (*Session, string, error)
	GetSession(ctx context.Context, id string) (*Session, error)
	// SessionByToken resolves a session token (UNAUTHORIZED when unknown).
	SessionByToken(ctx context.Context, token string) (*Session, error)
	// RotateSessionToken replaces the session's token and returns the new one.
	RotateSessionToken(ctx context.Context, id string) (string, error)
	// ListSessions lists a task's sessions, newest first.
	ListSessions(ctx context.Context, taskID string, p Page) (*List[Session], error)
	// ListWorkspaceSessions lists a workspace's sessions, newest first.
	ListWorkspaceSessions(ctx context.Context, workspaceID string, p Page) (*List[Session], error)
	SetSessionMode(ctx context.Context, id string, m Mode) (*Session, error)
	SetSessionState(ctx context.Context, id string, s SessionState) (*Session, error)
	// CancelSessions moves every session of the task that has not ended to
	// CANCELLED and appends note (its Author, Type and Content) to each,
	// all in one transaction, and returns the cancelled sessions.
	CancelSessions(ctx context.Context, taskID string, note Message) ([]Session, error)
	// CancelSession is CancelSessions for one session; it cancels nothing
	// (and returns none) when the session has already ended.
	CancelSession(ctx context.Context, sessionID string, note Message) ([]Session, error)
	// AttachSession records that the session's MCP server attached to
	// backend (which holds its connection): a CREATED session is RUNNING.
	AttachSession(ctx context.Context, id, backend string) (*Session, error)
	// DetachSession records that the session's last MCP server went away:
	// a session made by hand is CREATED again (waiting for its agent).
	DetachSession(ctx context.Context, id string) (*Session, error)
	// ReleaseAttachments detaches the sessions attached to a backend other
	// than backend with no lease renewed since then, and returns them.
	ReleaseAttachments(ctx context.Context, backend string, since time.Time) ([]Session, error)
	AppendMessage(ctx context.Context, m Message) (*Message, error)
	// AppendTaskMessage appends a message to a task's conversation that
	// belongs to no session (what the workflow engine did).
	AppendTaskMessage(ctx context.Context, taskID string, m Message) (*Message, error)
	// ListMessages returns a page of a task's conversation. NextCursor
	// continues in the same direction.
	ListMessages(ctx context.Context, f MessageFilter) (*List[Message], error)
}

// QuestionService stores the questions sessions ask, of the operator or of
// their parent task.
type QuestionService interface {
	// CreateQuestion stores a pending question; with deliver, the message
	// deliver returns for it is appended in the same transaction.
	CreateQuestion(ctx context.Context, q Question, deliver func(*Question) *Message) (*Question, *Message, error)
	GetQuestion(ctx context.Context, id string) (*Question, error)
	// AnswerQuestion records answers (or a rejection when reject is true)
	// if the question is still pending; claimed is false when another
	// answer won first (the stored question is returned either way).
	AnswerQuestion(ctx context.Context, id string, answers []Answer, reject bool, reason string) (q *Question, claimed bool, err error)
	ListQuestions(ctx context.Context, f QuestionFilter, p Page) (*List[Question], error)
	// ReplyParentQuestion records a parent's reply to a pending parent
	// question and appends deliver in the same transaction; claimed is
	// false (nothing appended) when the question was no longer pending.
	ReplyParentQuestion(ctx context.Context, id, reply string, deliver Message) (q *Question, m *Message, claimed bool, err error)
}

// QuestionFilter selects questions. Empty fields do not filter.
type QuestionFilter struct {
	WorkspaceID  string
	SessionID    string
	TaskID       string
	Kind         string
	State        string
	CreatedSince string // RFC 3339
}

// ArtifactService stores plans, documents and session artifacts.
type ArtifactService interface {
	// CreatePlan refuses (CONFLICT) when the task already has a plan.
	CreatePlan(ctx context.Context, p Plan) (*Plan, error)
	GetPlan(ctx context.Context, taskID string) (*Plan, error)
	// UpdatePlan stores a new revision.
	UpdatePlan(ctx context.Context, taskID string, title *string, content string, by string) (*Plan, error)
	DeletePlan(ctx context.Context, taskID string) error
	ListPlanRevisions(ctx context.Context, taskID string, p Page) (*List[Plan], error)

	// WriteDocument creates or revises the document (taskID, key).
	WriteDocument(ctx context.Context, d Document) (*Document, error)
	GetDocument(ctx context.Context, taskID, key string) (*Document, error)
	// ListDocuments lists a task's documents without content.
	ListDocuments(ctx context.Context, taskID string, p Page) (*List[Document], error)

	CreateArtifact(ctx context.Context, a Artifact) (*Artifact, error)
	// LatestArtifact returns the newest artifact of kind for the task.
	LatestArtifact(ctx context.Context, taskID, kind string) (*Artifact, error)
	ListArtifacts(ctx context.Context, taskID, kind string, p Page) (*List[Artifact], error)
	// DeleteArtifacts deletes the task's artifacts of kind created before
	// before (every one for the zero time) and reports how many.
	DeleteArtifacts(ctx context.Context, taskID, kind string, before time.Time) (int, error)
}

// ConfigService manages agents, executors, their profiles, MCP configs and repositories.
type ConfigService interface {
	ListAgents(ctx context.Context, p Page) (*List[Agent], error)
	GetAgent(ctx context.Context, id string) (*Agent, error)
	UpdateAgent(ctx context.Context, id string, supportsMCP *bool, mcpConfigPath *string) (*Agent, error)
	// EnsureAgents adds the agent types that have no row (by name), each
	// with a default profile; existing rows stay as they are.
	EnsureAgents(ctx context.Context, types []AgentTypeName) error
	ListAgentProfiles(ctx context.Context, f ProfileFilter, p Page) (*List[AgentProfile], error)
	GetAgentProfile(ctx context.Context, id string) (*AgentProfile, error)
	// DefaultAgentProfile returns the default profile of the first agent.
	DefaultAgentProfile(ctx context.Context) (*AgentProfile, error)
	CreateAgentProfile(ctx context.Context, p AgentProfile) (*AgentProfile, error)
	UpdateAgentProfile(ctx context.Context, id string, u AgentProfileUpdate) (*AgentProfile, error)
	// DeleteAgentProfile refuses (CONFLICT) while a RUNNING session uses it.
	DeleteAgentProfile(ctx context.Context, id string) error
	GetMCPConfig(ctx context.Context, profileID string) (*MCPConfig, error)
	// UpdateMCPConfig sets the fields given; servers nil keeps them.
	UpdateMCPConfig(ctx context.Context, profileID string, u MCPConfigUpdate) (*MCPConfig, error)

	ListExecutors(ctx context.Context, p Page) (*List[Executor], error)
	GetExecutor(ctx context.Context, id string) (*Executor, error)
	ListExecutorProfiles(ctx context.Context, f ProfileFilter, p Page) (*List[ExecutorProfile], error)
	GetExecutorProfile(ctx context.Context, id string) (*ExecutorProfile, error)
	DefaultExecutorProfile(ctx context.Context) (*ExecutorProfile, error)
	CreateExecutorProfile(ctx context.Context, p ExecutorProfile) (*ExecutorProfile, error)
	UpdateExecutorProfile(ctx context.Context, id string, u ExecutorProfileUpdate) (*ExecutorProfile, error)
	DeleteExecutorProfile(ctx context.Context, id string) error

	CreateRepository(ctx context.Context, r Repository) (*Repository, error)
	GetRepository(ctx context.Context, id string) (*Repository, error)
	// FindRepository finds a workspace repository by local path or remote URL.
	FindRepository(ctx context.Context, workspaceID, localPath, remoteURL string) (*Repository, error)
	ListRepositories(ctx context.Context, workspaceID string, p Page) (*List[Repository], error)
	UpdateRepository(ctx context.Context, id string, defaultBranch *string) (*Repository, error)
}

// AgentProfileUpdate changes the set fields of an agent profile.
type AgentProfileUpdate struct {
	Name         *string
	Model        *string
	AutoApprove  *bool
	UserQuestion *bool
}

// MCPConfigUpdate changes an agent profile's MCP configuration.
type MCPConfigUpdate struct {
	Enabled *bool
	// Servers, when not nil, replaces the stored servers.
	Servers map[string]MCPServerConfig
	// Check, when set, runs in the write's transaction before anything is
	// written, with the profile, its stored configuration and Servers: it
	// refuses the write, or returns the servers to store in Servers' place
	// (masked secrets restored, say); nil keeps the stored ones.
	Check func(prof *AgentProfile, stored *MCPConfig, servers map[string]MCPServerConfig) (map[string]MCPServerConfig, error)
}

// ExecutorProfileUpdate changes the set fields of an executor profile.
type ExecutorProfileUpdate struct {
	Name          *string
	MCPPolicy     *string
	Config        map[string]json.RawMessage // nil: unchanged
	PrepareScript *string
	CleanupScript *string
}

// UpstreamService stores what sessions report about their proxied MCP servers.
type UpstreamService interface {
	// ReplaceUpstreams replaces a session's report (validated by ValidateUpstreams).
	ReplaceUpstreams(ctx context.Context, sessionID string, servers []UpstreamServer) ([]UpstreamServer, error)
	ListUpstreams(ctx context.Context, sessionID string, p Page) (*List[UpstreamServer], error)
	// ListRefusedTools lists refused tools by server and position; server "" means all.
	ListRefusedTools(ctx context.Context, sessionID, server string, p Page) (*List[RefusedTool], error)
}

// Store is every service together: what the backend is composed from.
type Store interface {
	WorkspaceService
	WorkflowService
	TaskService
	SessionService
	QuestionService
	ArtifactService
	ConfigService
	RunService
	FlowService
	AgentModeService
	AgentOfferService
	UsageService
	BudgetService
	RoutineService
	ApprovalInboxService
	UpstreamService
	ReviewService
	CommentService
	PullRequestService
	NotificationService
	AuditService
	SecretService
	// Seed creates the default workspace with the workflow w and its steps
	// (as ImportWorkflow takes them: in board order, referring to each
	// other by position), the agents and the executors on an empty
	// database, and does nothing on a seeded one.
	Seed(ctx context.Context, w Workflow, steps []WorkflowStep) error
	Close() error
}
