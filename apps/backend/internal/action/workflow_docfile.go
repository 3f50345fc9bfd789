package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The workflow document, in the reference product's portable format.
const (
	WorkflowDocType    = "kandev_workflow"
	WorkflowDocVersion = 1
)

// WorkflowDocument is the portable, versioned form of workflows and their
// steps (workflow.export / workflow.import), as the reference product
// writes it: no ids or timestamps; steps refer to each other by position.
type WorkflowDocument struct {
	Version   int           `json:"version"`
	Type      string        `json:"type"`
	Workflows []DocWorkflow `json:"workflows"`
}

// DocAgentProfile names an agent profile portably: by agent type and model.
type DocAgentProfile struct {
	AgentName string `json:"agent_name"`
	Model     string `json:"model,omitempty"`
	Mode      string `json:"mode,omitempty"`
}

// DocWorkflow is one workflow of a document.
type DocWorkflow struct {
	Name         string           `json:"name"`
	Description  string           `json:"description,omitempty"`
	Prompt       string           `json:"prompt,omitempty"`
	AgentProfile *DocAgentProfile `json:"agent_profile,omitempty"`
	Steps        []DocStep        `json:"steps"`
}

// DocStep is one step of a document workflow, with the reference's fields
// in its order, then Kandev's own (AutoAdvance), which the reference does
// not have and ignores.
type DocStep struct {
	Name                       string                         `json:"name"`
	Position                   int                            `json:"position"`
	Color                      string                         `json:"color"`
	Prompt                     string                         `json:"prompt,omitempty"`
	Events                     map[string][]kanban.StepAction `json:"events"`
	IsStartStep                bool                           `json:"is_start_step"`
	ShowInCommandPanel         bool                           `json:"show_in_command_panel"`
	AllowManualMove            bool                           `json:"allow_manual_move"`
	AutoArchiveAfterHours      int                            `json:"auto_archive_after_hours,omitempty"`
	HeartbeatMinutes           int                            `json:"heartbeat_minutes,omitempty"`
	AgentProfile               *DocAgentProfile               `json:"agent_profile,omitempty"`
	AutoAdvanceRequiresSignal  bool                           `json:"auto_advance_requires_signal"`
	CancelTriggersTurnComplete bool                           `json:"cancel_triggers_turn_complete"`
	WIPLimit                   int                            `json:"wip_limit,omitempty"`
	PullFromStepPosition       *int                           `json:"pull_from_step_position,omitempty"`
	AutoAdvance                bool                           `json:"auto_advance,omitempty"`
	// Approval is Kandev's Office participants and quorum, portably.
	Approval *DocApproval `json:"approval,omitempty"`
}

// DocApproval is a step's participants and quorum in a document: agent
// participants are named portably, the reject step by position.
type DocApproval struct {
	Participants       []DocParticipant `json:"participants"`
	Quorum             string           `json:"quorum"`
	Count              int              `json:"count,omitempty"`
	RejectStepPosition *int             `json:"reject_step_position,omitempty"`
}

// DocParticipant is one participant: the operator or an agent profile.
type DocParticipant struct {
	Role         string           `json:"role"`
	Operator     bool             `json:"operator,omitempty"`
	AgentProfile *DocAgentProfile `json:"agent_profile,omitempty"`
	Instructions string           `json:"instructions,omitempty"`
}

// parsedWorkflow is a checked document workflow, ready to write.
type parsedWorkflow struct {
	workflow kanban.Workflow
	steps    []kanban.WorkflowStep // in board (position) order
	// order[at] is the document index of the step at board index at.
	order []int
}

// parseWorkflowDocument reads a document's text (JSON or YAML), strictly
// (unknown keys and wrong types refused with their path), and checks every
// workflow and step. Agent profiles are matched by the caller.
func parseWorkflowDocument(text string) (*WorkflowDocument, []parsedWorkflow, error) {
	raw, err := docJSON(text)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, nil, kanban.FieldError("document", "is not valid JSON")
	}
	if _, ok := tree.(map[string]any); !ok {
		return nil, nil, kanban.FieldError("document", "must be an object with type, version and workflows")
	}
	if err := checkKeys(tree, reflect.TypeFor[WorkflowDocument](), "document"); err != nil {
		return nil, nil, err
	}
	var doc WorkflowDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, nil, kanban.FieldError("document", "does not match the workflow document shape")
	}
	if doc.Type != WorkflowDocType {
		return nil, nil, kanban.FieldError("document.type", "must be %q", WorkflowDocType)
	}
	if doc.Version != WorkflowDocVersion {
		return nil, nil, kanban.FieldError("document.version", "must be %d", WorkflowDocVersion)
	}
	if len(doc.Workflows) == 0 || len(doc.Workflows) > kanban.MaxDocWorkflows {
		return nil, nil, kanban.FieldError("document.workflows", "must hold between 1 and %d workflows", kanban.MaxDocWorkflows)
	}
	out := make([]parsedWorkflow, len(doc.Workflows))
	for i, dw := range doc.Workflows {
		field := fmt.Sprintf("document.workflows[%d]", i)
		if slices.ContainsFunc(doc.Workflows[:i], func(o DocWorkflow) bool { return o.Name == dw.Name }) {
			return nil, nil, kanban.FieldError(field+".name", "repeats another workflow's name in the document")
		}
		if out[i], err = parseDocWorkflow(field, dw); err != nil {
			return nil, nil, err
		}
	}
	return &doc, out, nil
}

func parseDocWorkflow(field string, dw DocWorkflow) (parsedWorkflow, error) {
	for _, c := range []struct {
		f, v string
		max  int
	}{{"name", dw.Name, kanban.MaxNameLen}, {"description", dw.Description, kanban.MaxDescriptionLen}, {"prompt", dw.Prompt, kanban.MaxPromptLen}} {
		if err := kanban.CheckText(field+"."+c.f, c.v, c.f == "name", c.max); err != nil {
			return parsedWorkflow{}, err
		}
	}
	if len(dw.Steps) == 0 || len(dw.Steps) > kanban.MaxWorkflowSteps {
		return parsedWorkflow{}, kanban.FieldError(field+".steps", "must hold between 1 and %d steps", kanban.MaxWorkflowSteps)
	}
	// Steps go on the board in position order; references by position
	// become 0-based indexes in that order.
	order := make([]int, len(dw.Steps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return dw.Steps[a].Position - dw.Steps[b].Position })
	index := make(map[int]int, len(dw.Steps))
	for at, i := range order {
		if _, dup := index[dw.Steps[i].Position]; dup {
			return parsedWorkflow{}, kanban.FieldError(fmt.Sprintf("%s.steps[%d].position", field, i), "repeats another step's position")
		}
		index[dw.Steps[i].Position] = at
	}
	specs := make([]StepSpec, len(order))
	for at, i := range order {
		spec, err := docStepSpec(fmt.Sprintf("%s.steps[%d]", field, i), dw.Steps[i], index)
		if err != nil {
			return parsedWorkflow{}, err
		}
		specs[at] = spec
	}
	steps, err := checkStepSpecs(field+".steps", specs)
	if err != nil {
		return parsedWorkflow{}, err
	}
	return parsedWorkflow{workflow: kanban.Workflow{Name: dw.Name, Description: dw.Description, Prompt: dw.Prompt},
		steps: steps, order: order}, nil
}

// docStepSpec converts a document step into a step spec, turning its
// position references (move_to_step, pull_from_step_position) into board
// indexes; a step id from another installation means nothing here.
func docStepSpec(field string, d DocStep, index map[int]int) (StepSpec, error) {
	manual := d.AllowManualMove
	spec := StepSpec{Name: d.Name, Color: d.Color, Prompt: d.Prompt, IsStartStep: d.IsStartStep, AllowManualMove: &manual,
		AutoAdvance: d.AutoAdvance, WIPLimit: d.WIPLimit, AutoArchiveAfterHours: d.AutoArchiveAfterHours, HeartbeatMinutes: d.HeartbeatMinutes,
		AutoAdvanceRequiresSignal: d.AutoAdvanceRequiresSignal, CancelTriggersTurnComplete: d.CancelTriggersTurnComplete,
		ShowInCommandPanel: d.ShowInCommandPanel, Events: make(map[string][]kanban.StepAction, len(d.Events))}
	var err error
	if spec.Approval, err = docApproval(field+".approval", d, index); err != nil {
		return spec, err
	}
	if d.PullFromStepPosition != nil {
		at, ok := index[*d.PullFromStepPosition]
		if !ok || *d.PullFromStepPosition == d.Position {
			return spec, kanban.FieldError(field+".pull_from_step_position", "must be the position of another step of the workflow")
		}
		spec.PullFromStepPosition = &at
	}
	for ev, actions := range d.Events {
		if !slices.Contains(kanban.StepEventKinds, ev) {
			return spec, kanban.FieldError(field+".events", "keys must be one of: %s", strings.Join(kanban.StepEventKinds, ", "))
		}
		out := make([]kanban.StepAction, len(actions))
		for j, a := range actions {
			out[j] = a
			if a.Type != kanban.AutoMoveToStep {
				continue
			}
			af := fmt.Sprintf("%s.events.%s[%d].config", field, ev, j)
			if _, hasID := a.Config["step_id"]; hasID {
				return spec, kanban.FieldError(af+".step_id", "cannot name a step in a document; use step_position")
			}
			pos, ok := a.ConfigInt("step_position")
			at, found := index[pos]
			if !ok || !found {
				return spec, kanban.FieldError(af+".step_position", "must be the position of a step of the workflow")
			}
			out[j].Config = map[string]json.RawMessage{"step_position": json.RawMessage(fmt.Sprint(at))}
		}
		spec.Events[ev] = out
	}
	return spec, nil
}

// docApproval converts a document step's approval into a step approval
// whose agent participants are still unbound (bindProfiles binds them),
// its reject step a board index.
func docApproval(field string, d DocStep, index map[int]int) (*kanban.StepApproval, error) {
	if d.Approval == nil {
		return nil, nil
	}
	a := &kanban.StepApproval{Quorum: d.Approval.Quorum, Count: d.Approval.Count,
		Participants: make([]kanban.StepParticipant, len(d.Approval.Participants))}
	for i, p := range d.Approval.Participants {
		if p.Operator == (p.AgentProfile != nil) {
			return nil, kanban.FieldError(fmt.Sprintf("%s.participants[%d]", field, i), "must be either an agent_profile or operator: true")
		}
		a.Participants[i] = kanban.StepParticipant{Role: p.Role, Operator: p.Operator, Instructions: p.Instructions}
		if !p.Operator {
			// A placeholder id, unique per participant, until bindProfiles.
			a.Participants[i].AgentProfileID = fmt.Sprintf("unbound-%d", i)
		}
	}
	if pos := d.Approval.RejectStepPosition; pos != nil {
		at, ok := index[*pos]
		if !ok || *pos == d.Position {
			return nil, kanban.FieldError(field+".reject_step_position", "must be the position of another step of the workflow")
		}
		a.RejectStepPosition = &at
	}
	return a, nil
}

// exportApproval is a step approval in a document's form.
func exportApproval(a *kanban.StepApproval, positions map[string]int, profile func(id string) *DocAgentProfile) *DocApproval {
	if a == nil {
		return nil
	}
	d := &DocApproval{Quorum: a.Quorum, Count: a.Count, Participants: make([]DocParticipant, len(a.Participants))}
	for i, p := range a.Participants {
		d.Participants[i] = DocParticipant{Role: p.Role, Operator: p.Operator, Instructions: p.Instructions}
		if !p.Operator {
			d.Participants[i].AgentProfile = profile(p.AgentProfileID)
		}
	}
	if pos, ok := positions[a.RejectStepID]; ok {
		d.RejectStepPosition = &pos
	}
	return d
}

// exportWorkflow builds the document of one workflow: positions are board
// indexes, step references become positions, profiles become portable.
func exportWorkflow(w *kanban.Workflow, steps []kanban.WorkflowStep, profile func(id string) *DocAgentProfile) *WorkflowDocument {
	positions := make(map[string]int, len(steps))
	for i, st := range steps {
		positions[st.ID] = i
	}
	dw := DocWorkflow{Name: w.Name, Description: w.Description, Prompt: w.Prompt, AgentProfile: profile(w.AgentProfileID),
		Steps: make([]DocStep, len(steps))}
	for i, st := range steps {
		d := DocStep{Name: st.Name, Position: i, Color: st.Color, Prompt: st.Prompt, IsStartStep: st.IsStartStep,
			ShowInCommandPanel: st.ShowInCommandPanel, AllowManualMove: st.AllowManualMove,
			AutoArchiveAfterHours: st.AutoArchiveAfterHours, HeartbeatMinutes: st.HeartbeatMinutes, AgentProfile: profile(st.AgentProfileID),
			AutoAdvanceRequiresSignal: st.AutoAdvanceRequiresSignal, CancelTriggersTurnComplete: st.CancelTriggersTurnComplete,
			WIPLimit: st.WIPLimit, AutoAdvance: st.AutoAdvance, Events: make(map[string][]kanban.StepAction, len(st.Events))}
		if pos, ok := positions[st.PullFromStepID]; ok {
			d.PullFromStepPosition = &pos
		}
		d.Approval = exportApproval(st.Approval, positions, profile)
		for ev, actions := range st.Events {
			out := make([]kanban.StepAction, len(actions))
			for j, a := range actions {
				out[j] = a
				if pos, ok := positions[a.ConfigString("step_id")]; ok && a.Type == kanban.AutoMoveToStep {
					out[j].Config = map[string]json.RawMessage{"step_position": json.RawMessage(fmt.Sprint(pos))}
				}
			}
			d.Events[ev] = out
		}
		dw.Steps[i] = d
	}
	return &WorkflowDocument{Version: WorkflowDocVersion, Type: WorkflowDocType, Workflows: []DocWorkflow{dw}}
}

// portableProfile returns the portable name of an agent profile (nil for
// none or one that no longer exists).
func (s *Service) portableProfile(ctx context.Context) func(id string) *DocAgentProfile {
	return func(id string) *DocAgentProfile {
		if id == "" {
			return nil
		}
		p, err := s.store.GetAgentProfile(ctx, id)
		if err != nil {
			return nil
		}
		a, err := s.store.GetAgent(ctx, p.AgentID)
		if err != nil {
			return nil
		}
		return &DocAgentProfile{AgentName: a.Name, Model: p.Model}
	}
}

// matchProfile finds this installation's agent profile for a portable
// one, among those usable in workspaceID (the global ones and its own): of
// that agent type, with that model when one is named (else the type's
// default profile, else its first). Empty when none matches.
func (s *Service) matchProfile(ctx context.Context, workspaceID string, d *DocAgentProfile) (string, error) {
	if d == nil {
		return "", nil
	}
	pg := kanban.Page{Limit: kanban.MaxLimit}
	var first string
	for {
		l, err := s.store.ListAgentProfiles(ctx, kanban.ProfileFilter{Workspace: workspaceID}, pg)
		if err != nil {
			return "", err
		}
		for _, p := range l.Items {
			a, err := s.store.GetAgent(ctx, p.AgentID)
			if err != nil || a.Name != d.AgentName {
				continue
			}
			if d.Model != "" && p.Model == d.Model || d.Model == "" && p.IsDefault {
				return p.ID, nil
			}
			if first == "" && d.Model == "" {
				first = p.ID
			}
		}
		if l.NextCursor == "" {
			return first, nil
		}
		pg.Cursor = l.NextCursor
	}
}
