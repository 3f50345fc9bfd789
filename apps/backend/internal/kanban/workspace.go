package kanban

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Workspace groups workflows, tasks and repositories.
type Workspace struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Workflow is an ordered list of steps in a workspace.
type Workflow struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Prompt is given to the workflow's agents before their step's prompt.
	Prompt string `json:"prompt,omitempty"`
	// AgentProfileID is the profile the workflow's automations start
	// agents with when their step names none.
	AgentProfileID string    `json:"agent_profile_id,omitempty"`
	SortOrder      int       `json:"sort_order"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// StepAction is one automation run on a step event.
type StepAction struct {
	Type   string                     `json:"type"`
	Config map[string]json.RawMessage `json:"config,omitempty"`
}

// WorkflowStep is one column of a workflow.
type WorkflowStep struct {
	ID                    string `json:"id"`
	WorkflowID            string `json:"workflow_id"`
	Name                  string `json:"name"`
	Position              int    `json:"position"`
	Color                 string `json:"color"`
	Prompt                string `json:"prompt"`
	IsStartStep           bool   `json:"is_start_step"`
	AllowManualMove       bool   `json:"allow_manual_move"`
	AutoAdvance           bool   `json:"auto_advance"`
	WIPLimit              int    `json:"wip_limit"`
	AutoArchiveAfterHours int    `json:"auto_archive_after_hours"`
	// HeartbeatMinutes, when set, fires on_heartbeat for each task on the
	// step every that many minutes it stays (0: never).
	HeartbeatMinutes int `json:"heartbeat_minutes"`
	// AutoAdvanceRequiresSignal: turn-end transitions (auto_advance and
	// on_turn_complete moves) happen only after step_complete_kandev in
	// that turn.
	AutoAdvanceRequiresSignal bool `json:"auto_advance_requires_signal"`
	// CancelTriggersTurnComplete: an interrupted or stopped turn still runs
	// on_turn_complete (and auto-advance).
	CancelTriggersTurnComplete bool `json:"cancel_triggers_turn_complete"`
	// ShowInCommandPanel lists the step in the board's command panel
	// (Ctrl/Cmd+K) as a quick action: move the open task there, or create
	// a task in it.
	ShowInCommandPanel bool `json:"show_in_command_panel"`
	// PullFromStepID: when the step has room, the oldest task waiting on
	// that step (of the same workflow) is pulled in.
	PullFromStepID string `json:"pull_from_step_id,omitempty"`
	// AgentProfileID is the profile the step's automations start agents
	// with (default: the workflow's, else the default profile).
	AgentProfileID string `json:"agent_profile_id,omitempty"`
	// PullFromPosition is PullFromStepID in a workflow document's form (the
	// step's 0-based position), resolved when the steps are written.
	PullFromPosition *int `json:"-"`
	// InsertAt, for CreateStep, puts the new step at this 0-based position
	// (later steps shift right) instead of last.
	InsertAt *int                    `json:"-"`
	Events   map[string][]StepAction `json:"events"`
	// Approval is the step's participants and quorum (nil: none).
	Approval  *StepApproval `json:"approval,omitempty"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
}

// MaxWorkflowSteps bounds the steps of one workflow (created one by one,
// imported, or reordered).
const MaxWorkflowSteps = 50

// Bounds of an imported workflow document (import_workflow_kandev).
const (
	MaxWorkflowDocBytes = 1 << 20 // the document's text
	MaxDocWorkflows     = 20      // workflows of one document
	// MaxWorkflowDocNodes bounds the values a YAML document expands to
	// (aliases included): a "billion laughs" document is refused as soon
	// as its expansion passes it, long before it uses memory.
	MaxWorkflowDocNodes = 100_000
	MaxWorkflowDocDepth = 64 // nesting of a YAML document
)

// Bounds of a step's settings and of open settings records, enforced by
// the store and advertised by the MCP schemas alike.
const (
	MaxWIPLimit           = 10_000
	MaxAutoArchiveHours   = 87_600 // ten years
	MaxHeartbeatMinutes   = 10_080 // a week
	MaxStepActions        = 20     // automations per event
	MaxStepActionKeys     = 50     // keys in one automation's config
	MaxExecutorConfigKeys = 100
	MaxStepEventsBytes    = MaxPromptLen // a step's automations, as stored JSON
	// SettingKeyPattern is the form of a key in an open settings record
	// (automation and executor config).
	SettingKeyPattern = `^[A-Za-z0-9_.-]{1,64}$`
)

var settingKey = regexp.MustCompile(SettingKeyPattern)

// CheckSettings validates an open settings record: at most maxKeys keys,
// each of SettingKeyPattern's form (never echoed).
func CheckSettings(field string, m map[string]json.RawMessage, maxKeys int) error {
	if len(m) > maxKeys {
		return FieldError(field, "at most %d settings", maxKeys)
	}
	for k := range m {
		if !settingKey.MatchString(k) {
			return FieldError(field, "setting names must match %s", SettingKeyPattern)
		}
	}
	return nil
}

// Text bounds shared by validation in every transport.
const (
	MaxNameLen        = 100
	MaxTitleLen       = 60
	MaxDescriptionLen = 2000
	MaxPromptLen      = 100_000
	MaxContentLen     = 512 * 1024
	// MaxExternalIDLen bounds a task's idempotency key (external_id).
	MaxExternalIDLen = 200
)

// Delivery modes of a prompt sent to a task's agent (message_task_kandev).
const (
	DeliveryQueued    = "queued"    // at the session's next turn (the default)
	DeliveryInterrupt = "interrupt" // cancel the current turn and deliver at once
)

// DeliveryModes lists the delivery modes.
var DeliveryModes = []string{DeliveryQueued, DeliveryInterrupt}

// CheckLine validates a single-line text (a title or a name): CheckText's
// rules, and no control characters (no newlines, tabs or NUL).
func CheckLine(field, v string, required bool, maxLen int) error {
	if err := CheckText(field, v, required, maxLen); err != nil {
		return err
	}
	return SingleLine(field, v)
}

// SingleLine refuses a title or a name with control characters (newlines,
// tabs, NUL): the rule of a single line that a payload schema, which bounds
// only its length, cannot express.
func SingleLine(field, v string) error {
	for _, r := range v {
		if unicode.IsControl(r) {
			return FieldError(field, "must be a single line without control characters")
		}
	}
	return nil
}

// CheckText validates a required or optional text field's length in runes.
func CheckText(field, v string, required bool, maxLen int) error {
	if required && v == "" {
		return FieldError(field, "is required")
	}
	if !utf8.ValidString(v) {
		return FieldError(field, "must be valid UTF-8")
	}
	if utf8.RuneCountInString(v) > maxLen {
		return FieldError(field, "longer than %d characters", maxLen)
	}
	return nil
}

// Clip cuts s to at most n bytes without splitting a rune, and makes it
// valid UTF-8: for text Kandev records from processes it does not control
// (agent output, script output), which is bounded rather than refused.
func Clip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}
