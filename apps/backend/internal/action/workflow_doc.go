package action

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

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
	Name                  string                         `json:"name"`
	Color                 string                         `json:"color"`
	Prompt                string                         `json:"prompt"`
	IsStartStep           bool                           `json:"is_start_step"`
	AllowManualMove       *bool                          `json:"allow_manual_move"`
	AutoAdvance           bool                           `json:"auto_advance"`
	WIPLimit              int                            `json:"wip_limit"`
	AutoArchiveAfterHours int                            `json:"auto_archive_after_hours"`
	Events                map[string][]kanban.StepAction `json:"events"`
}

// toStep converts a spec into a step of no workflow yet.
func (d DocStep) toStep() kanban.WorkflowStep {
	return kanban.WorkflowStep{Name: d.Name, Color: d.Color, Prompt: d.Prompt, IsStartStep: d.IsStartStep,
		AllowManualMove: d.AllowManualMove == nil || *d.AllowManualMove, AutoAdvance: d.AutoAdvance,
		WIPLimit: d.WIPLimit, AutoArchiveAfterHours: d.AutoArchiveAfterHours, Events: d.Events}
}

// docStepOf converts a stored step into its document form.
func docStepOf(st kanban.WorkflowStep) DocStep {
	manual := st.AllowManualMove
	events := st.Events
	if events == nil {
		events = map[string][]kanban.StepAction{}
	}
	return DocStep{Name: st.Name, Color: st.Color, Prompt: st.Prompt, IsStartStep: st.IsStartStep,
		AllowManualMove: &manual, AutoAdvance: st.AutoAdvance, WIPLimit: st.WIPLimit,
		AutoArchiveAfterHours: st.AutoArchiveAfterHours, Events: events}
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
	return checkEvents(name("events"), s.Events)
}

// checkEvents validates step event automations: known keys, typed actions.
func checkEvents(field string, ev map[string][]kanban.StepAction) error {
	for k, actions := range ev {
		if !slices.Contains(kanban.StepEventKinds, k) {
			return kanban.FieldError(field, "keys must be one of: on_enter, on_exit, on_turn_start, on_turn_complete")
		}
		for _, a := range actions {
			if err := kanban.CheckText(field+".*[].type", a.Type, true, kanban.MaxNameLen); err != nil {
				return err
			}
		}
	}
	return nil
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
	for i, st := range steps {
		doc.Steps[i] = docStepOf(st)
	}
	return doc
}
