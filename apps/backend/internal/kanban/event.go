package kanban

import (
	"context"
	"slices"
)

// Publisher delivers notifications to the subscribers of a topic
// ("workspace:<id>", "session:<id>"). The WebSocket server and the
// cluster's event bus implement it and relay any event by name; code
// that announces a change publishes one of the events below through its
// Publish, which accepts only that event's payload type.
type Publisher interface {
	Publish(topic, event string, payload any)
}

// ContextPublisher is a Publisher that also takes the publishing call's
// context: the cluster's bus carries its trace to the other backends.
type ContextPublisher interface {
	Publisher
	PublishContext(ctx context.Context, topic, event string, payload any)
}

// PublishContext is pub's PublishContext when it has one, else its
// Publish.
func PublishContext(ctx context.Context, pub Publisher, topic, event string, payload any) {
	if cp, ok := pub.(ContextPublisher); ok {
		cp.PublishContext(ctx, topic, event, payload)
		return
	}
	pub.Publish(topic, event, payload)
}

// Event is one notification the backend publishes: its name on the wire
// and, as P, the Go type of its payload. Each is declared once, below;
// publishing a payload of another type does not compile.
type Event[P any] struct{ name string }

// Name is the event's name on the wire (the notification's "action").
func (e Event[P]) Name() string { return e.name }

// Publish sends payload as e to the subscribers of topic.
func (e Event[P]) Publish(pub Publisher, topic string, payload P) {
	pub.Publish(topic, e.name, payload)
}

// PublishContext is Publish from a call with context ctx (see
// ContextPublisher).
func (e Event[P]) PublishContext(ctx context.Context, pub Publisher, topic string, payload P) {
	PublishContext(ctx, pub, topic, e.name, payload)
}

// eventNames are the names of the declared events, in declaration order.
var eventNames []string

func event[P any](name string) Event[P] {
	eventNames = append(eventNames, name)
	return Event[P]{name: name}
}

// EventNames lists the name of every declared event, sorted.
func EventNames() []string { return slices.Sorted(slices.Values(eventNames)) }

// The events, each with its payload type. A running agent's session
// publishes on its session topic and its workspace topic; the rest go to
// the workspace topic, some also to the session's.
var (
	EventTaskCreated           = event[*Task]("task.created")
	EventTaskUpdated           = event[*Task]("task.updated")
	EventTaskMoved             = event[*Task]("task.moved")
	EventTaskDeleted           = event[DeletedTask]("task.deleted")
	EventTaskDependencyAdded   = event[*TaskDependency]("task.dependency_added")
	EventTaskRepositoryUpdated = event[*TaskRepository]("task.repository_updated")
	// EventPullRequestUpdated: a task's pull request was opened, read
	// again from its forge, or merged through Kandev.
	EventPullRequestUpdated = event[*PullRequest]("task.pr_updated")

	EventSessionCreated          = event[*Session]("session.created")
	EventSessionUpdated          = event[*Session]("session.updated")
	EventSessionStopped          = event[*Session]("session.stopped")
	EventSessionModeChanged      = event[*SessionProfile]("session.mode_changed")
	EventSessionMessage          = event[SessionMessage]("session.message")
	EventSessionUpstreamsChanged = event[*SessionUpstreams]("session.upstreams_changed")
	// EventSessionUsageUpdated: a turn's usage was recorded; the payload is
	// the session's totals.
	EventSessionUsageUpdated = event[*SessionUsage]("session.usage_updated")
	// EventBudgetAlerted: a turn's usage pushed a budget's spend across one
	// of its alert thresholds (once per budget revision and threshold).
	EventBudgetAlerted = event[BudgetAlert]("budget.alert")

	EventPermissionRequested = event[*Permission]("permission.requested")
	EventPermissionResolved  = event[*Permission]("permission.resolved")
	EventQuestionCreated     = event[*Question]("question.created")
	EventQuestionAnswered    = event[*Question]("question.answered")

	EventPlanUpdated     = event[*Plan]("plan.updated")
	EventPlanDeleted     = event[DeletedPlan]("plan.deleted")
	EventDocumentUpdated = event[*Document]("document.updated")
	EventArtifactCreated = event[*Artifact]("artifact.created")
	EventArtifactDeleted = event[DeletedArtifacts]("artifact.deleted")
	// EventCommentCreated: a comment was added to a task.
	EventCommentCreated = event[*Comment]("task.comment_created")

	EventWorkflowCreated        = event[*Workflow]("workflow.created")
	EventWorkflowUpdated        = event[*Workflow]("workflow.updated")
	EventWorkflowDeleted        = event[DeletedWorkflow]("workflow.deleted")
	EventWorkflowStepCreated    = event[*WorkflowStep]("workflow.step_created")
	EventWorkflowStepUpdated    = event[*WorkflowStep]("workflow.step_updated")
	EventWorkflowStepDeleted    = event[DeletedStep]("workflow.step_deleted")
	EventWorkflowStepsReordered = event[StepOrder]("workflow.steps_reordered")

	EventNotificationCreated = event[*Notification]("notification.created")
	EventNotificationsRead   = event[*NotificationsRead]("notification.read")

	EventRepositoryCreated = event[*Repository]("repository.created")
	EventRepositoryUpdated = event[*Repository]("repository.updated")
	// EventRepositoryClone: the clone of a repository registered by remote
	// URL only, made for a task's worktree, progressed, completed or
	// failed.
	EventRepositoryClone = event[*RepositoryClone]("repository.clone_progress")
)

// Clone states of RepositoryClone.
const (
	CloneRunning = "cloning"
	CloneDone    = "done"
	CloneFailed  = "failed"
)

// RepositoryClone is the payload of repository.clone_progress: one clone's
// state, the phase git reports and its percent. Error is safe text (no
// URL, no credential).
type RepositoryClone struct {
	WorkspaceID  string `json:"workspace_id"`
	RepositoryID string `json:"repository_id"`
	TaskID       string `json:"task_id,omitempty"`
	State        string `json:"state"`
	Phase        string `json:"phase,omitempty"`
	Percent      int    `json:"percent"`
	Error        string `json:"error,omitempty"`
}

// DeletedTask is the payload of task.deleted.
type DeletedTask struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
}

// SessionMessage is the payload of session.message: a conversation
// message, and how a prompt was delivered (for a prompt a caller sent).
type SessionMessage struct {
	DeliveryMode string   `json:"delivery_mode,omitempty"`
	Message      *Message `json:"message"`
}

// SessionUpstreams is the payload of session.upstreams_changed: the
// proxied MCP servers a session's MCP server last reported.
type SessionUpstreams struct {
	SessionID string           `json:"session_id"`
	Servers   []UpstreamServer `json:"servers"`
}

// DeletedPlan is the payload of plan.deleted.
type DeletedPlan struct {
	TaskID string `json:"task_id"`
}

// DeletedArtifacts is the payload of artifact.deleted: how many
// artifacts of a kind (every kind when empty) a task lost.
type DeletedArtifacts struct {
	Deleted int    `json:"deleted"`
	Kind    string `json:"kind"`
	TaskID  string `json:"task_id"`
}

// DeletedWorkflow is the payload of workflow.deleted.
type DeletedWorkflow struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
}

// DeletedStep is the payload of workflow.step_deleted.
type DeletedStep struct {
	ID         string `json:"id"`
	WorkflowID string `json:"workflow_id"`
}

// StepOrder is the payload of workflow.steps_reordered: a workflow's
// steps, in their new order.
type StepOrder struct {
	StepIDs    []string `json:"step_ids"`
	WorkflowID string   `json:"workflow_id"`
}
