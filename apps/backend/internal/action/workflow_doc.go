package action

import (
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
	HeartbeatMinutes      int    `json:"heartbeat_minutes,omitzero"`
	// AutoAdvanceRequiresSignal gates turn-end transitions on step_complete.
	AutoAdvanceRequiresSignal  bool `json:"auto_advance_requires_signal,omitzero"`
	CancelTriggersTurnComplete bool `json:"cancel_triggers_turn_complete,omitzero"`
	ShowInCommandPanel         bool `json:"show_in_command_panel,omitzero"`
	// PullFromStepID names the step to pull waiting tasks from; in a
	// document (whose steps have no ids yet) it is PullFromStepPosition.
	PullFromStepID       string                         `json:"pull_from_step_id,omitempty"`
	PullFromStepPosition *int                           `json:"pull_from_step_position,omitempty"`
	Events               map[string][]kanban.StepAction `json:"events,omitzero"`
	// Approval is the step's participants and quorum (Office).
	Approval *kanban.StepApproval `json:"approval,omitzero"`
}

// toStep converts a spec into a step of no workflow yet.
func (d StepSpec) toStep() kanban.WorkflowStep {
	return kanban.WorkflowStep{Name: d.Name, Color: d.Color, Prompt: d.Prompt, IsStartStep: d.IsStartStep,
		AllowManualMove: d.AllowManualMove == nil || *d.AllowManualMove, AutoAdvance: d.AutoAdvance,
		WIPLimit: d.WIPLimit, AutoArchiveAfterHours: d.AutoArchiveAfterHours, HeartbeatMinutes: d.HeartbeatMinutes, Events: d.Events,
		AutoAdvanceRequiresSignal: d.AutoAdvanceRequiresSignal, PullFromStepID: d.PullFromStepID,
		CancelTriggersTurnComplete: d.CancelTriggersTurnComplete, ShowInCommandPanel: d.ShowInCommandPanel,
		PullFromPosition: d.PullFromStepPosition, Approval: d.Approval}
}

// checkStepSpecs converts step specs into steps of no workflow yet and
// checks them (kanban.CheckSteps): the steps of an imported document, which
// no payload schema checks, and those of workflow.create, whose list rules
// (unique names, one start step) no schema can express.
func checkStepSpecs(field string, specs []StepSpec) ([]kanban.WorkflowStep, error) {
	steps := make([]kanban.WorkflowStep, len(specs))
	for i, spec := range specs {
		steps[i] = spec.toStep()
	}
	if err := kanban.CheckSteps(field, steps); err != nil {
		return nil, err
	}
	return steps, nil
}
