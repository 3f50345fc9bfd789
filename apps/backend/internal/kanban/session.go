package kanban

import (
	"slices"
	"time"
)

// SessionState is the lifecycle state of an agent session.
type SessionState string

// Session states. CREATED is a session made by hand for an agent the
// operator connects; the others are the states of an agent the runtime
// runs (see docs/public/agents.md for the transitions).
const (
	SessionCreated         SessionState = "CREATED"
	SessionQueued          SessionState = "QUEUED"
	SessionStarting        SessionState = "STARTING"
	SessionRunning         SessionState = "RUNNING"
	SessionWaitingForInput SessionState = "WAITING_FOR_INPUT"
	SessionIdle            SessionState = "IDLE"
	SessionCompleted       SessionState = "COMPLETED"
	SessionFailed          SessionState = "FAILED"
	SessionCancelled       SessionState = "CANCELLED"
)

// SessionStates lists every SessionState.
var SessionStates = []SessionState{SessionCreated, SessionQueued, SessionStarting, SessionRunning,
	SessionWaitingForInput, SessionIdle, SessionCompleted, SessionFailed, SessionCancelled}

// Valid reports whether s is a known state.
func (s SessionState) Valid() bool { return slices.Contains(SessionStates, s) }

// Ended reports whether s is a state a session never leaves.
func (s SessionState) Ended() bool {
	return s == SessionCompleted || s == SessionFailed || s == SessionCancelled
}

// Mode is the MCP tool surface a session's agent sees.
type Mode string

// MCP modes.
const (
	ModeTask             Mode = "task"
	ModeTaskTitlePending Mode = "task-title-pending"
	ModeConfig           Mode = "config"
	ModeExternal         Mode = "external"
	ModeOffice           Mode = "office"
)

// SessionModes are the modes a session may be put in (external is the
// operator endpoint's mode, never a session's).
var SessionModes = []Mode{ModeTask, ModeTaskTitlePending, ModeConfig, ModeOffice}

// AllModes lists every mode.
var AllModes = []Mode{ModeTask, ModeTaskTitlePending, ModeConfig, ModeExternal, ModeOffice}

// ValidSessionMode reports whether m may be set on a session.
func ValidSessionMode(m Mode) bool { return slices.Contains(SessionModes, m) }

// SessionScope is how far a task session's writes reach: the server
// setting --session-scope (KANDEV_SESSION_SCOPE).
type SessionScope string

// Session scopes.
const (
	// ScopeTree (the default): a task session changes only its own task,
	// its descendants, the tasks it created and their descendants.
	ScopeTree SessionScope = "tree"
	// ScopeWorkspace: a task session changes any task of its workspace.
	ScopeWorkspace SessionScope = "workspace"
)

// SessionScopes lists every SessionScope, the default first.
var SessionScopes = []SessionScope{ScopeTree, ScopeWorkspace}

// Session capabilities.
const (
	// CapUserQuestion lets a session ask the operator questions.
	CapUserQuestion = "user-question"
	// CapParentQuestion lets an autopilot subtask's session ask its
	// direct parent task (it never asks the operator).
	CapParentQuestion = "parent-question"
)

// Capabilities lists every session capability an operator may give.
var Capabilities = []string{CapUserQuestion, CapParentQuestion}

// Forge capabilities: derived, never set. The backend adds them to a
// session's profile from its task's repositories: a session has one when
// at least one repository's remote_url has a forge account of that forge
// in the forges file, and loses it when none has.
const (
	// CapForgeGitHub serves the GitHub pull request automation tools.
	CapForgeGitHub = "forge-github"
	// CapForgeGitLab serves the GitLab merge request automation tools.
	CapForgeGitLab = "forge-gitlab"
)

// ForgeCapabilities lists the derived capabilities, in profile order.
var ForgeCapabilities = []string{CapForgeGitHub, CapForgeGitLab}

// ForgeCapability is the derived capability of a forge kind ("" for an
// unknown kind).
func ForgeCapability(k ForgeKind) string {
	switch k {
	case ForgeGitHub:
		return CapForgeGitHub
	case ForgeGitLab:
		return CapForgeGitLab
	}
	return ""
}

// Session is one agent run on a task.
type Session struct {
	ID                string       `json:"id"`
	TaskID            string       `json:"task_id"`
	WorkspaceID       string       `json:"workspace_id"`
	AgentProfileID    string       `json:"agent_profile_id,omitempty"`
	ExecutorProfileID string       `json:"executor_profile_id,omitempty"`
	State             SessionState `json:"state"`
	MCPMode           Mode         `json:"mcp_mode"`
	Capabilities      []string     `json:"capabilities"`
	MCPAttached       bool         `json:"mcp_attached"`
	// Name labels the session (e.g. "reviewer"); empty when unnamed.
	Name string `json:"name,omitempty"`
	// Managed is true when the runtime runs the session's agent (false for
	// a session made by hand, whose agent the operator connects).
	Managed bool `json:"managed"`
	// Workdir is the directory the agent runs in, once prepared.
	Workdir string `json:"workdir,omitempty"`
	// AgentSessionID is the agent's own (ACP) session id, once started.
	AgentSessionID string `json:"agent_session_id,omitempty"`
	// ExitCode is the agent process's exit code, once it exited.
	ExitCode *int `json:"exit_code,omitempty"`
	// Error says why a FAILED session failed (bounded, secrets redacted).
	Error          string     `json:"error,omitempty"`
	StartedAt      *time.Time `json:"started_at,omitempty"`
	EndedAt        *time.Time `json:"ended_at,omitempty"`
	LastAttachedAt *time.Time `json:"last_attached_at,omitempty"`
	LastDetachedAt *time.Time `json:"last_detached_at,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	// Usage is the session's usage totals, in session.list only (nil
	// when its agent reported none).
	Usage *SessionUsage `json:"usage,omitempty"`
}

// SessionProfile is what a session's MCP server serves: the session's
// mode and capabilities (the result of session.profile and the payload of
// session.mode_changed).
type SessionProfile struct {
	SessionID    string   `json:"session_id"`
	TaskID       string   `json:"task_id"`
	WorkspaceID  string   `json:"workspace_id"`
	Mode         Mode     `json:"mode"`
	Capabilities []string `json:"capabilities"`
}

// ProfileOf derives a session's MCP profile.
func ProfileOf(s *Session) *SessionProfile {
	caps := s.Capabilities
	if caps == nil {
		caps = []string{}
	}
	return &SessionProfile{SessionID: s.ID, TaskID: s.TaskID, WorkspaceID: s.WorkspaceID, Mode: s.MCPMode, Capabilities: caps}
}

// SessionCreate is the input of SessionService.CreateSession. Empty profile
// ids resolve to the defaults; Mode defaults to task; Capabilities nil means
// the profile's defaults.
type SessionCreate struct {
	TaskID            string
	AgentProfileID    string
	ExecutorProfileID string
	Mode              Mode
	Capabilities      []string
	// Name labels the session.
	Name string
	// Managed sessions are run by the runtime; they start QUEUED.
	// Others start CREATED.
	Managed bool
	// Owner is the backend whose runtime runs a managed session's agent
	// (the one creating it), written with the session: no other backend
	// takes it over while that backend's lease is valid.
	Owner string
	// FirstMessage, when set, opens the session's conversation: it is
	// appended as AppendMessage would (its SessionID and TaskID are the new
	// session's) in the session's own transaction.
	FirstMessage *Message
	// UnlessEnded, when set, names a session whose end cancels this
	// one's creation (CONFLICT), checked in the creating transaction: an
	// automation an agent's turn led to starts no agent once that agent
	// was stopped, however the stop and the automation interleave.
	UnlessEnded string
}

// Message is one entry of a session's conversation.
type Message struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	TaskID    string    `json:"task_id"`
	Author    string    `json:"author"`
	Type      string    `json:"type"`
	Content   string    `json:"content"`
	Turn      int       `json:"turn"`
	CreatedAt time.Time `json:"created_at"`
}

// MessageTypes are the allowed Message.Type values.
var MessageTypes = []string{"message", "prompt", "thought", "tool_call", "tool_result", "plan", "permission",
	"status", "error", "question", "answer", "comment"}

// MessageFilter selects a task's conversation.
type MessageFilter struct {
	TaskID    string
	SessionID string
	Types     []string
	Desc      bool
	Before    string // cursor: messages strictly before this one
	After     string // cursor: messages strictly after this one
	Limit     int
}

// Question is a bundle of 1–4 questions a session asks: of the operator
// (kind user, ask_user_question_kandev) or of its task's direct parent
// task (kind parent, ask_parent_question_kandev, for autopilot subtasks).
type Question struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"` // user|parent
	SessionID   string `json:"session_id"`
	TaskID      string `json:"task_id"`
	WorkspaceID string `json:"workspace_id"`
	// Context is shared background shown with the questions.
	Context      string         `json:"context,omitempty"`
	Questions    []QuestionItem `json:"questions"`
	State        string         `json:"state"` // pending|answered|rejected
	Answers      []Answer       `json:"answers,omitempty"`
	RejectReason string         `json:"reject_reason,omitempty"`
	// Reply is a parent task's answer to a parent question.
	Reply      string     `json:"reply,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	AnsweredAt *time.Time `json:"answered_at,omitempty"`
}

// QuestionItem is one question with its offered options.
type QuestionItem struct {
	ID string `json:"id"`
	// Title is a short label (at most 12 characters) shown above the prompt.
	Title       string           `json:"title,omitempty"`
	Prompt      string           `json:"prompt"`
	MultiSelect bool             `json:"multi_select"`
	Options     []QuestionOption `json:"options"`
}

// QuestionOption is one offered answer; answers name it by OptionID.
type QuestionOption struct {
	OptionID    string `json:"option_id"`
	Label       string `json:"label"`
	Description string `json:"description"`
}

// Answer answers one QuestionItem: chosen option ids or a custom text.
type Answer struct {
	QuestionID      string   `json:"question_id"`
	SelectedOptions []string `json:"selected_options,omitempty"`
	CustomText      string   `json:"custom_text,omitempty"`
}

// Question kinds.
const (
	QuestionForUser   = "user"
	QuestionForParent = "parent"
)

// Question states.
const (
	QuestionPending  = "pending"
	QuestionAnswered = "answered"
	QuestionRejected = "rejected"
)

// QuestionKinds and QuestionStates list the question kinds and states.
var (
	QuestionKinds  = []string{QuestionForUser, QuestionForParent}
	QuestionStates = []string{QuestionPending, QuestionAnswered, QuestionRejected}
)

// QuestionWaitingForParent is ask_parent_question_kandev's status: the
// question was delivered to the parent, whose answer comes as a prompt.
const QuestionWaitingForParent = "waiting_for_parent"

// Bounds of a question bundle and of its answers, shared by the question
// tools' schemas, the action layer and the store.
const (
	MaxQuestionItems       = 4    // questions in one bundle
	MinQuestionOptions     = 2    // options of one question, at least
	MaxQuestionOptions     = 6    // options of one question, at most
	MaxQuestionTextLen     = 1000 // a question's prompt
	MaxQuestionTitleLen    = 12   // a question's short label
	MaxOptionLabelLen      = 100  // an option's label
	MaxOptionDescLen       = 500  // an option's description
	MaxQuestionContext     = 8000 // the shared context (context_paragraphs joined)
	MaxContextParagraphs   = 20   // paragraphs of the shared context
	MaxContextParagraphLen = 4000 // one paragraph of the shared context
	MaxQuestionIDLen       = 64   // a question_id or option_id an answer names
	MaxAnswerCustomLen     = 2000 // an answer's custom text
	MaxAnswerReasonLen     = 1000 // a rejection's reason
	DefaultQuestionWait    = 600  // seconds ask_user_question_kandev waits by default
	MaxQuestionWait        = 3600 // seconds ask_user_question_kandev waits at most
	MaxTimestampLen        = 64   // an RFC 3339 time a question listing filters by (created_since)
)

// MaxTopics bounds the topics of one subscribe or unsubscribe call.
const MaxTopics = 50

// MaxStopReasonLen bounds why sessions are stopped (stop_task_kandev, the
// stop_agent automation, session.stop).
const MaxStopReasonLen = 1000

// Orders of a conversation listing (get_task_conversation_kandev).
const (
	OrderAsc  = "asc" // oldest first (the default)
	OrderDesc = "desc"
)

// MessageOrders lists the orders of a conversation listing.
var MessageOrders = []string{OrderAsc, OrderDesc}
