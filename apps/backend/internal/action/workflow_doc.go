package action

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Workflow document format identifiers and bounds.
const (
	WorkflowDocFormat  = "kandev_workflow"
	WorkflowDocVersion = 1
	// MaxWorkflowDocBytes bounds an imported document's encoded size.
	MaxWorkflowDocBytes = 1 << 20
)

// WorkflowDocument is the portable, versioned form of a workflow and its
// steps (workflow.export / workflow.import). It holds no ids or timestamps,
// so exporting an imported document yields the same bytes.
type WorkflowDocument struct {
	Format   string      `json:"format"`
	Version  int         `json:"version"`
	Workflow DocWorkflow `json:"workflow"`
	Steps    []DocStep   `json:"steps"`
}

// DocWorkflow is the workflow part of a WorkflowDocument.
type DocWorkflow struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// DocStep is one step's settings, in board order. It is also the step
// spec of workflow.create. AllowManualMove defaults to true when omitted.
type DocStep struct {
	Name                  string `json:"name"`
	Color                 string `json:"color"`
	Prompt                string `json:"prompt"`
	IsStartStep           bool   `json:"is_start_step"`
	AllowManualMove       *bool  `json:"allow_manual_move"`
	AutoAdvance           bool   `json:"auto_advance"`
	WIPLimit              int    `json:"wip_limit"`
	AutoArchiveAfterHours int    `json:"auto_archive_after_hours"`
	// AutoAdvanceRequiresSignal gates turn-end transitions on step_complete.
	AutoAdvanceRequiresSignal  bool `json:"auto_advance_requires_signal"`
	CancelTriggersTurnComplete bool `json:"cancel_triggers_turn_complete"`
	ShowInCommandPanel         bool `json:"show_in_command_panel"`
	// PullFromStepID names the step to pull waiting tasks from; in a
	// document (whose steps have no ids yet) it is PullFromStepPosition.
	PullFromStepID       string                         `json:"pull_from_step_id,omitempty"`
	PullFromStepPosition *int                           `json:"pull_from_step_position,omitempty"`
	Events               map[string][]kanban.StepAction `json:"events"`
}

// toStep converts a spec into a step of no workflow yet.
func (d DocStep) toStep() kanban.WorkflowStep {
	return kanban.WorkflowStep{Name: d.Name, Color: d.Color, Prompt: d.Prompt, IsStartStep: d.IsStartStep,
		AllowManualMove: d.AllowManualMove == nil || *d.AllowManualMove, AutoAdvance: d.AutoAdvance,
		WIPLimit: d.WIPLimit, AutoArchiveAfterHours: d.AutoArchiveAfterHours, Events: d.Events,
		AutoAdvanceRequiresSignal: d.AutoAdvanceRequiresSignal, PullFromStepID: d.PullFromStepID,
		CancelTriggersTurnComplete: d.CancelTriggersTurnComplete, ShowInCommandPanel: d.ShowInCommandPanel,
		PullFromPosition: d.PullFromStepPosition}
}

// docStepOf converts a stored step into its document form: references to
// steps (move_to_step, pull_from_step_id) become positions, which survive
// an import into a new workflow.
func docStepOf(st kanban.WorkflowStep, positions map[string]int) DocStep {
	manual := st.AllowManualMove
	events := make(map[string][]kanban.StepAction, len(st.Events))
	for ev, actions := range st.Events {
		out := make([]kanban.StepAction, len(actions))
		for i, a := range actions {
			out[i] = a
			if pos, ok := positions[a.ConfigString("step_id")]; ok && a.Type == kanban.AutoMoveToStep {
				out[i].Config = map[string]json.RawMessage{"step_position": json.RawMessage(fmt.Sprint(pos))}
			}
		}
		events[ev] = out
	}
	d := DocStep{Name: st.Name, Color: st.Color, Prompt: st.Prompt, IsStartStep: st.IsStartStep,
		AllowManualMove: &manual, AutoAdvance: st.AutoAdvance, WIPLimit: st.WIPLimit,
		AutoArchiveAfterHours: st.AutoArchiveAfterHours, Events: events,
		AutoAdvanceRequiresSignal: st.AutoAdvanceRequiresSignal, CancelTriggersTurnComplete: st.CancelTriggersTurnComplete,
		ShowInCommandPanel: st.ShowInCommandPanel}
	if pos, ok := positions[st.PullFromStepID]; ok {
		d.PullFromStepPosition = &pos
	}
	return d
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
func checkStepSpecs(field string, specs []DocStep) ([]kanban.WorkflowStep, error) {
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

// parseWorkflowDocument decodes and validates an imported document,
// strictly (unknown keys and wrong types rejected with their path).
func parseWorkflowDocument(raw json.RawMessage) (*WorkflowDocument, []kanban.WorkflowStep, error) {
	if len(raw) > MaxWorkflowDocBytes {
		return nil, nil, kanban.FieldError("document", "larger than %d bytes", MaxWorkflowDocBytes)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil, kanban.FieldError("document", "is required and must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, nil, kanban.FieldError("document", "is not valid JSON")
	}
	if err := checkKeys(tree, reflect.TypeFor[WorkflowDocument](), "document"); err != nil {
		return nil, nil, err
	}
	var doc WorkflowDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, nil, kanban.FieldError("document", "does not match the workflow document shape")
	}
	if doc.Format != WorkflowDocFormat {
		return nil, nil, kanban.FieldError("document.format", "must be %q", WorkflowDocFormat)
	}
	if doc.Version != WorkflowDocVersion {
		return nil, nil, kanban.FieldError("document.version", "must be %d", WorkflowDocVersion)
	}
	if err := kanban.CheckText("document.workflow.name", doc.Workflow.Name, true, kanban.MaxNameLen); err != nil {
		return nil, nil, err
	}
	if err := kanban.CheckText("document.workflow.description", doc.Workflow.Description, false, kanban.MaxDescriptionLen); err != nil {
		return nil, nil, err
	}
	steps, err := checkStepSpecs("document.steps", doc.Steps)
	if err != nil {
		return nil, nil, err
	}
	return &doc, steps, nil
}

// exportWorkflow builds the document of a workflow and its steps.
func exportWorkflow(w *kanban.Workflow, steps []kanban.WorkflowStep) *WorkflowDocument {
	doc := &WorkflowDocument{Format: WorkflowDocFormat, Version: WorkflowDocVersion,
		Workflow: DocWorkflow{Name: w.Name, Description: w.Description}, Steps: make([]DocStep, len(steps))}
	positions := make(map[string]int, len(steps))
	for i, st := range steps {
		positions[st.ID] = i
	}
	for i, st := range steps {
		doc.Steps[i] = docStepOf(st, positions)
	}
	return doc
}
