package action

import (
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// StepSpec is one step's settings as workflow.create and
// workflow.step.create take them. AllowManualMove defaults to true when
// omitted; PullFromStepPosition names a step by its 0-based position.
type StepSpec struct {
	Name                  string `json:"name,omitzero"`
	Color                 string `json:"color,omitzero"`
	Prompt                string `json:"prompt,omitzero"`
	IsStartStep           bool   `json:"is_start_step,omitzero"`
	AllowManualMove       *bool  `json:"allow_manual_move,omitzero"`
	AutoAdvance           bool   `json:"auto_advance,omitzero"`
	WIPLimit              int    `json:"wip_limit,omitzero"`
	AutoArchiveAfterHours int    `json:"auto_archive_after_hours,omitzero"`
	// AutoAdvanceRequiresSignal gates turn-end transitions on step_complete.
	AutoAdvanceRequiresSignal  bool `json:"auto_advance_requires_signal,omitzero"`
	CancelTriggersTurnComplete bool `json:"cancel_triggers_turn_complete,omitzero"`
	ShowInCommandPanel         bool `json:"show_in_command_panel,omitzero"`
	// PullFromStepID names the step to pull waiting tasks from; in a
	// document (whose steps have no ids yet) it is PullFromStepPosition.
	PullFromStepID       string                         `json:"pull_from_step_id,omitempty"`
	PullFromStepPosition *int                           `json:"pull_from_step_position,omitempty"`
	Events               map[string][]kanban.StepAction `json:"events,omitzero"`
}

// toStep converts a spec into a step of no workflow yet.
func (d StepSpec) toStep() kanban.WorkflowStep {
	return kanban.WorkflowStep{Name: d.Name, Color: d.Color, Prompt: d.Prompt, IsStartStep: d.IsStartStep,
		AllowManualMove: d.AllowManualMove == nil || *d.AllowManualMove, AutoAdvance: d.AutoAdvance,
		WIPLimit: d.WIPLimit, AutoArchiveAfterHours: d.AutoArchiveAfterHours, Events: d.Events,
		AutoAdvanceRequiresSignal: d.AutoAdvanceRequiresSignal, PullFromStepID: d.PullFromStepID,
		CancelTriggersTurnComplete: d.CancelTriggersTurnComplete, ShowInCommandPanel: d.ShowInCommandPanel,
		PullFromPosition: d.PullFromStepPosition}
}

// checkStepSpec validates a step's settings, naming fields under prefix
// (for example "document.steps[2]"; empty for a top-level payload).
func checkStepSpec(prefix string, s kanban.WorkflowStep) error {
	name := func(f string) string {
		if prefix == "" {
			return f
		}
		return prefix + "." + f
	}
	if err := kanban.CheckText(name("name"), s.Name, true, kanban.MaxNameLen); err != nil {
		return err
	}
	if err := kanban.CheckText(name("color"), s.Color, false, kanban.MaxNameLen); err != nil {
		return err
	}
	if err := kanban.CheckText(name("prompt"), s.Prompt, false, kanban.MaxPromptLen); err != nil {
		return err
	}
	if s.WIPLimit < 0 {
		return kanban.FieldError(name("wip_limit"), "must be 0 (no limit) or greater")
	}
	if s.AutoArchiveAfterHours < 0 {
		return kanban.FieldError(name("auto_archive_after_hours"), "must be 0 (never) or greater")
	}
	return kanban.CheckEvents(name("events"), s.Events)
}

// checkStepSpecs validates a list of step specs: 1–kanban.MaxWorkflowSteps steps,
// unique names, at most one start step, each step valid.
func checkStepSpecs(field string, specs []StepSpec) ([]kanban.WorkflowStep, error) {
	if len(specs) == 0 || len(specs) > kanban.MaxWorkflowSteps {
		return nil, kanban.FieldError(field, "must hold between 1 and %d steps", kanban.MaxWorkflowSteps)
	}
	steps := make([]kanban.WorkflowStep, len(specs))
	names := make(map[string]bool, len(specs))
	starts := 0
	for i, spec := range specs {
		st := spec.toStep()
		if err := checkStepSpec(fmt.Sprintf("%s[%d]", field, i), st); err != nil {
			return nil, err
		}
		if names[st.Name] {
			return nil, kanban.FieldError(field, "step names must be unique within a workflow")
		}
		names[st.Name] = true
		if st.IsStartStep {
			starts++
		}
		steps[i] = st
	}
	if starts > 1 {
		return nil, kanban.FieldError(field, "at most one step may be the start step")
	}
	return steps, nil
}
