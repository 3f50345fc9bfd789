package kanban

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Step events: when a step's automations run.
const (
	EventEnter        = "on_enter"         // a task arrives on the step
	EventExit         = "on_exit"          // a task leaves the step
	EventTurnStart    = "on_turn_start"    // an agent turn starts on a task on the step
	EventTurnComplete = "on_turn_complete" // an agent turn ends on a task on the step
	// EventComment: someone commented on the task (a task comment), or a
	// reviewer on its pull request (seen by the PR watcher).
	EventComment = "on_comment"
	// EventChildrenCompleted: every subtask of the task has ended
	// (completed, failed or cancelled), the last of them just now.
	EventChildrenCompleted = "on_children_completed"
	// EventPRMerged: a pull request of the task was merged (by the PR
	// automation, through task.pr.merge, or on the forge, found by the
	// watcher or a read), once per pull request.
	EventPRMerged = "on_pr_merged"
	// EventAgentError: an agent session of the task failed.
	EventAgentError = "on_agent_error"
	// EventApprovalResolved: the step's participants reached its quorum.
	EventApprovalResolved = "on_approval_resolved"
	// EventBudgetAlert: a turn on the task pushed a budget covering it
	// (the task's, its agent profile's, its workspace's) across an alert
	// threshold.
	EventBudgetAlert = "on_budget_alert"
	// EventHeartbeat: the task has stayed on the step another of its
	// heartbeat_minutes.
	EventHeartbeat = "on_heartbeat"
)

// StepEvent is one event a step's automations run on.
type StepEvent struct {
	Name string
	// When says when it fires, for the schemas and the docs.
	When string
}

// StepEvents is the closed set of step events, in the order schemas and
// docs list them: the engine fires exactly these, the step schema and the
// workflow import accept exactly these keys, and the docs' table is
// rendered from it.
var StepEvents = []StepEvent{
	{EventEnter, "a task arrives on the step: created there, or moved there by anyone or anything"},
	{EventExit, "a task leaves the step (before the next step's on_enter)"},
	{EventTurnStart, "an agent turn starts on a task on the step"},
	{EventTurnComplete, "an agent turn on a task on the step ends (not when it was interrupted, stopped or failed)"},
	{EventComment, "a comment was added to the task (add_task_comment_kandev, task.comment.add), or a reviewer commented on its pull request (seen once by the PR watcher)"},
	{EventChildrenCompleted, "the last of the task's subtasks ended (every subtask COMPLETED, FAILED or CANCELLED); once, also when several end at the same time"},
	{EventPRMerged, "a pull request of the task was merged; once per pull request"},
	{EventAgentError, "an agent session of the task failed (its agent exited with an error or could not start); once per session"},
	{EventApprovalResolved, "the step's participants reached its quorum: approved or rejected (after the task moved on, on the step decided)"},
	{EventBudgetAlert, "a turn on the task pushed a budget covering it (the task's, its agent profile's or its workspace's) across one of its alert thresholds; once per budget revision (each budget.set) and threshold"},
	{EventHeartbeat, "the task has stayed on the step another heartbeat_minutes (the step's setting) since it arrived or since the last heartbeat; once per interval across backends, none made up after downtime"},
}

// StepEventKinds are the keys allowed in WorkflowStep.Events.
var StepEventKinds = stepEventNames()

func stepEventNames() []string {
	out := make([]string, len(StepEvents))
	for i, e := range StepEvents {
		out[i] = e.Name
	}
	return out
}

// ParamKind is the type of an automation's config value.
type ParamKind int

// Automation parameter kinds.
const (
	ParamID    ParamKind = iota // an entity id
	ParamText                   // a text (a prompt, a reason)
	ParamState                  // a task state
	ParamIndex                  // a 0-based step position (documents only)
	ParamEnum                   // one of AutomationParam.Values
)

// AutomationParam is one config value an automation type takes.
type AutomationParam struct {
	Name     string
	Kind     ParamKind
	Required bool
	Desc     string
	MaxLen   int      // ParamText
	Values   []string // ParamEnum
}

// AutomationType is one kind of step automation the workflow engine runs.
// The step actions' contract schema and the domain check are both built
// from this table, so what is advertised is what is enforced and executed.
type AutomationType struct {
	Name   string
	Desc   string
	Params []AutomationParam
	// OneOf, when set, names params of which exactly one must be given.
	OneOf []string
}

// Automation type names.
const (
	AutoStartAgent     = "start_agent"
	AutoAutoStartAgent = "auto_start_agent"
	AutoSendPrompt     = "send_prompt"
	AutoMoveNext       = "move_to_next"
	AutoMoveNextStep   = "move_to_next_step"
	AutoMovePrevious   = "move_to_previous"
	AutoMovePrevStep   = "move_to_previous_step"
	AutoMoveToStep     = "move_to_step"
	AutoSetState       = "set_state"
	AutoStopAgent      = "stop_agent"
	AutoArchive        = "archive"
	// The agent's mode and context (the reference product's types).
	AutoEnablePlanMode  = "enable_plan_mode"
	AutoDisablePlanMode = "disable_plan_mode"
	AutoSetSessionMode  = "set_session_mode"
	AutoResetContext    = "reset_agent_context"
	// Office: wake agents, forget decisions.
	AutoQueueRun             = "queue_run"
	AutoQueueRunParticipants = "queue_run_for_each_participant"
	AutoClearDecisions       = "clear_decisions"
)

// MaxWakeReasonLen bounds the reason a queue_run gives the agent it wakes.
const MaxWakeReasonLen = 2000

// IDPattern is the form of an entity id in every payload.
const IDPattern = `^[A-Za-z0-9_-]{1,64}$`

var idPattern = regexp.MustCompile(IDPattern)

// MaxAutomationTextLen bounds a text parameter of an automation.
const MaxAutomationTextLen = 10_000

// AutomationTypes is the closed set of automation types, in the order the
// schema lists them.
var AutomationTypes = []AutomationType{
	{Name: AutoStartAgent, Desc: "Start an agent session on the task unless one is live.",
		Params: []AutomationParam{
			{Name: "agent_profile_id", Kind: ParamID, Desc: "Agent profile; default: the default."},
			{Name: "executor_profile_id", Kind: ParamID, Desc: "Executor profile; default: the default."},
			{Name: "prompt", Kind: ParamText, MaxLen: MaxPromptLen, Desc: "First message; default the task's prompt."},
		}},
	{Name: AutoAutoStartAgent, Desc: "start_agent with the default profiles."},
	{Name: AutoSendPrompt, Desc: "Queue a prompt as the live agent's next turn.",
		Params: []AutomationParam{{Name: "prompt", Kind: ParamText, Required: true, MaxLen: MaxAutomationTextLen, Desc: "The prompt."}}},
	{Name: AutoMoveNext, Desc: "To the next step (queued while full)."},
	{Name: AutoMoveNextStep, Desc: "Same as move_to_next."},
	{Name: AutoMovePrevious, Desc: "To the previous step."},
	{Name: AutoMovePrevStep, Desc: "Same as move_to_previous."},
	{Name: AutoMoveToStep, Desc: "Move the task to a step (queued while full).",
		Params: []AutomationParam{
			{Name: "step_id", Kind: ParamID, Desc: "The target step."},
			{Name: "step_position", Kind: ParamIndex, Desc: "0-based position, where steps have no ids yet."},
		}, OneOf: []string{"step_id", "step_position"}},
	{Name: AutoSetState, Desc: "Set the task's state.",
		Params: []AutomationParam{{Name: "state", Kind: ParamState, Required: true, Desc: "The new state."}}},
	{Name: AutoStopAgent, Desc: "Stop the task's live agent sessions.",
		Params: []AutomationParam{{Name: "reason", Kind: ParamText, MaxLen: MaxStopReasonLen, Desc: "Why, recorded in the conversation."}}},
	{Name: AutoArchive, Desc: "Archive the task."},
	{Name: AutoEnablePlanMode, Desc: "Plan mode (instructions, ACP mode plan) until disable_plan_mode."},
	{Name: AutoDisablePlanMode, Desc: "End plan mode."},
	{Name: AutoSetSessionMode, Desc: "Switch its agents to an ACP session mode.",
		Params: []AutomationParam{{Name: "mode", Kind: ParamText, Required: true, MaxLen: MaxSessionModeLen,
			Desc: "ACP session mode id, e.g. plan."}}},
	{Name: AutoResetContext, Desc: "Next turn in a fresh ACP session."},
	{Name: AutoQueueRun, Desc: "Wake an agent on the task with a reason: its next turn, or a new session when none is live.",
		Params: []AutomationParam{
			{Name: "target", Kind: ParamEnum, Values: WakeTargets, Desc: "primary (default): the task's primary agent; participant: the step participant agent_profile_id."},
			{Name: "agent_profile_id", Kind: ParamID, Desc: "The participant to wake (target participant)."},
			{Name: "reason", Kind: ParamText, Required: true, MaxLen: MaxWakeReasonLen, Desc: "Why, told to the agent."},
		}},
	{Name: AutoQueueRunParticipants, Desc: "queue_run for each agent participant of the step (operator participants decide with step.decide).",
		Params: []AutomationParam{
			{Name: "role", Kind: ParamEnum, Values: ParticipantRoles, Desc: "Only participants of this role; default all."},
			{Name: "reason", Kind: ParamText, Required: true, MaxLen: MaxWakeReasonLen, Desc: "Why, told to each agent."},
		}},
	{Name: AutoClearDecisions, Desc: "Forget the task's recorded step decisions (a new round of review)."},
}

// Wake targets of queue_run.
const (
	WakePrimary     = "primary"
	WakeParticipant = "participant"
)

// WakeTargets lists queue_run's targets.
var WakeTargets = []string{WakePrimary, WakeParticipant}

// MaxSessionModeLen bounds an ACP session mode id in set_session_mode.
const MaxSessionModeLen = 100

// AutomationTypeNames lists the automation types.
func AutomationTypeNames() []string {
	out := make([]string, len(AutomationTypes))
	for i, t := range AutomationTypes {
		out[i] = t.Name
	}
	return out
}

// LookupAutomation returns the automation type named name.
func LookupAutomation(name string) (*AutomationType, bool) {
	i := slices.IndexFunc(AutomationTypes, func(t AutomationType) bool { return t.Name == name })
	if i < 0 {
		return nil, false
	}
	return &AutomationTypes[i], true
}

// CheckAutomation validates one automation against its type's declared
// parameters: a known type, only declared config keys with values of
// their kind, required ones present. Messages name fields, never values.
func CheckAutomation(field string, a StepAction) error {
	t, ok := LookupAutomation(a.Type)
	if !ok {
		return FieldError(field+".type", "must be one of: %s", strings.Join(AutomationTypeNames(), ", "))
	}
	for k := range a.Config {
		if !slices.ContainsFunc(t.Params, func(p AutomationParam) bool { return p.Name == k }) {
			return FieldError(field+".config", "%s takes no other settings than %s", t.Name, paramNames(t))
		}
	}
	for _, p := range t.Params {
		raw, present := a.Config[p.Name]
		if !present {
			if p.Required {
				return FieldError(field+".config."+p.Name, "is required for %s", t.Name)
			}
			continue
		}
		if err := checkParam(field+".config."+p.Name, p, raw); err != nil {
			return err
		}
	}
	if len(t.OneOf) > 0 {
		n := 0
		for _, name := range t.OneOf {
			if _, ok := a.Config[name]; ok {
				n++
			}
		}
		if n != 1 {
			return FieldError(field+".config", "%s needs exactly one of %s", t.Name, strings.Join(t.OneOf, ", "))
		}
	}
	if t.Name == AutoQueueRun {
		_, named := a.Config["agent_profile_id"]
		if (a.ConfigString("target") == WakeParticipant) != named {
			return FieldError(field+".config", "queue_run takes agent_profile_id exactly when target is participant")
		}
	}
	return nil
}

func paramNames(t *AutomationType) string {
	if len(t.Params) == 0 {
		return "none"
	}
	names := make([]string, len(t.Params))
	for i, p := range t.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

func checkParam(field string, p AutomationParam, raw json.RawMessage) error {
	switch p.Kind {
	case ParamIndex:
		var n int
		if err := json.Unmarshal(raw, &n); err != nil || n < 0 || n >= MaxWorkflowSteps {
			return FieldError(field, "must be an integer from 0 to %d", MaxWorkflowSteps-1)
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return FieldError(field, "must be a string")
	}
	switch p.Kind {
	case ParamEnum:
		if !slices.Contains(p.Values, s) {
			return FieldError(field, "must be one of: %s", strings.Join(p.Values, ", "))
		}
	case ParamID:
		if !idPattern.MatchString(s) {
			return FieldError(field, "must be an id")
		}
	case ParamState:
		if !TaskState(s).Valid() {
			return FieldError(field, "must be one of %v", TaskStates)
		}
	case ParamText:
		return CheckText(field, s, true, p.MaxLen)
	}
	return nil
}

// ConfigString returns the string value of an automation's config key
// ("" when absent).
func (a StepAction) ConfigString(key string) string {
	var s string
	if raw, ok := a.Config[key]; ok {
		_ = json.Unmarshal(raw, &s) // validated by CheckAutomation
	}
	return s
}

// ConfigInt returns the integer value of a config key (ok false when absent).
func (a StepAction) ConfigInt(key string) (int, bool) {
	raw, present := a.Config[key]
	if !present {
		return 0, false
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, false
	}
	return n, true
}

// CheckEvents validates a step's events: known event keys, at most
// MaxStepActions automations each, every automation valid.
func CheckEvents(field string, ev map[string][]StepAction) error {
	for k, actions := range ev {
		if !slices.Contains(StepEventKinds, k) {
			return FieldError(field, "keys must be one of: %s", strings.Join(StepEventKinds, ", "))
		}
		if len(actions) > MaxStepActions {
			return FieldError(field, "at most %d automations per event", MaxStepActions)
		}
		for i, a := range actions {
			if err := CheckAutomation(fmt.Sprintf("%s.%s[%d]", field, k, i), a); err != nil {
				return err
			}
		}
	}
	return nil
}

// ValidID reports whether s has the form of an id (IDPattern).
func ValidID(s string) bool { return idPattern.MatchString(s) }
