package kanban

import (
	"context"
	"strings"
	"time"
)

// AgentMode is how a task's agents work, as step automations set it. The
// workflow engine writes it; the runtime applies it before every turn of
// the task's sessions, so a new session or a restarted backend keeps it.
type AgentMode struct {
	TaskID string
	// PlanMode: prompts carry the plan-mode instructions, and an agent
	// that offers the ACP session mode "plan" is switched to it.
	PlanMode bool
	// SessionMode is the ACP session mode id set_session_mode asked for
	// ("" when none).
	SessionMode string
	// ResetSessionID is a live session whose next turn starts in a fresh
	// ACP session (reset_agent_context); "" when none is due.
	ResetSessionID string
	// UpdatedAt is when it last changed (zero: never set).
	UpdatedAt time.Time
}

// AgentModeUpdate changes the fields that are not nil.
type AgentModeUpdate struct {
	PlanMode       *bool
	SessionMode    *string
	ResetSessionID *string
}

// merge applies v over u.
func (u *AgentModeUpdate) merge(v AgentModeUpdate) {
	setPtr(&u.PlanMode, v.PlanMode)
	setPtr(&u.SessionMode, v.SessionMode)
	setPtr(&u.ResetSessionID, v.ResetSessionID)
}

func setPtr[T any](dst **T, v *T) {
	if v != nil {
		*dst = v
	}
}

// Apply returns m with u applied.
func (m AgentMode) Apply(u AgentModeUpdate) AgentMode {
	if u.PlanMode != nil {
		m.PlanMode = *u.PlanMode
	}
	if u.SessionMode != nil {
		m.SessionMode = *u.SessionMode
	}
	if u.ResetSessionID != nil {
		m.ResetSessionID = *u.ResetSessionID
	}
	return m
}

// ModeUpdate is the change an enable_plan_mode, disable_plan_mode or
// set_session_mode automation makes to its task's agent mode (ok false
// for every other type).
func (a StepAction) ModeUpdate() (u AgentModeUpdate, ok bool) {
	switch a.Type {
	case AutoEnablePlanMode, AutoDisablePlanMode:
		on := a.Type == AutoEnablePlanMode
		return AgentModeUpdate{PlanMode: &on}, true
	case AutoSetSessionMode:
		mode := a.ConfigString("mode")
		return AgentModeUpdate{SessionMode: &mode}, true
	}
	return AgentModeUpdate{}, false
}

// EntryModes is what a step's on_enter automations set of an agent's
// mode, in order: a session that starts on the step starts so.
func (s *WorkflowStep) EntryModes() (u AgentModeUpdate, ok bool) {
	for _, a := range s.Events[EventEnter] {
		if v, isMode := a.ModeUpdate(); isMode {
			u.merge(v)
			ok = true
		}
	}
	return u, ok
}

// SetsUpAgent reports whether an automation configures the agent (its
// mode, its context) rather than acting on the task: on on_enter these
// run before the step's prompt is delivered.
func (a StepAction) SetsUpAgent() bool {
	_, mode := a.ModeUpdate()
	return mode || a.Type == AutoResetContext
}

// AgentModeService stores the agent modes of tasks.
type AgentModeService interface {
	// AgentMode returns a task's agent mode: the zero mode when no
	// automation set one (NOT_FOUND when the task does not exist).
	AgentMode(ctx context.Context, taskID string) (*AgentMode, error)
	// UpdateAgentMode applies u and returns the mode before and after
	// (NOT_FOUND when the task does not exist).
	UpdateAgentMode(ctx context.Context, taskID string, u AgentModeUpdate) (before, after *AgentMode, err error)
	// TakeReset clears the task's reset request when it names sessionID,
	// and reports whether it did.
	TakeReset(ctx context.Context, taskID, sessionID string) (bool, error)
}

// TaskPromptPlaceholder in a step prompt stands for the task's prompt.
const TaskPromptPlaceholder = "{{task_prompt}}"

// StepPromptWith returns a step prompt with its first {{task_prompt}}
// replaced by taskPrompt (as the reference product does) and true; the
// step prompt unchanged and false when it has no placeholder.
func StepPromptWith(stepPrompt, taskPrompt string) (string, bool) {
	if !strings.Contains(stepPrompt, TaskPromptPlaceholder) {
		return stepPrompt, false
	}
	return strings.Replace(stepPrompt, TaskPromptPlaceholder, taskPrompt, 1), true
}

// Prompt is the task's prompt as an agent gets it: its description, else
// its title.
func (t *Task) Prompt() string {
	if t.Description != "" {
		return t.Description
	}
	return t.Title
}
