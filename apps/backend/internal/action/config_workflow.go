package action

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// WorkflowCreateIn is the payload of workflow.create. With Steps the
// workflow and its steps are created in one transaction.
type WorkflowCreateIn struct {
	WorkspaceID string     `json:"workspace_id,omitzero"`
	Name        string     `json:"name,omitzero"`
	Description string     `json:"description,omitzero"`
	Steps       []StepSpec `json:"steps,omitzero"`
}

// WorkflowOut is the result of workflow.create and workflow.import.
type WorkflowOut struct {
	Workflow *kanban.Workflow      `json:"workflow"`
	Steps    []kanban.WorkflowStep `json:"steps"`
}

// WorkflowUpdateIn is the payload of workflow.update.
type WorkflowUpdateIn struct {
	WorkflowID  string  `json:"workflow_id,omitzero"`
	Name        *string `json:"name,omitzero"`
	Description *string `json:"description,omitzero"`
}

// WorkflowDeleteIn is the payload of workflow.delete. Without Cascade the
// delete is refused while tasks exist on the workflow.
type WorkflowDeleteIn struct {
	WorkflowID string `json:"workflow_id,omitzero"`
	Cascade    bool   `json:"cascade,omitzero"`
}

// WorkflowImportIn is the payload of workflow.import: a document's text,
// YAML or JSON, whose size and shape are checked before it is decoded, or
// the id of a built-in template (whose document is imported the same
// way). Name, when given, names the one workflow the document holds.
type WorkflowImportIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
	Document    string `json:"document,omitzero"`
	TemplateID  string `json:"template_id,omitzero"`
	Name        string `json:"name,omitzero"`
}

// WorkflowImportOut is the result of workflow.import: the names created
// and skipped (a workflow of that name already exists in the workspace),
// the created workflows, and what could not be carried over.
type WorkflowImportOut struct {
	Created   []string      `json:"created"`
	Skipped   []string      `json:"skipped"`
	Workflows []WorkflowOut `json:"workflows"`
	// Warnings name document fields (by path) Kandev could not honour,
	// such as an agent profile no local profile matches.
	Warnings []string `json:"warnings"`
}

var _ = declare(Def[WorkflowCreateIn, *WorkflowOut]{
	Name:   kanban.ActionWorkflowCreate,
	Effect: Writes,
	Tool:   "create_workflow_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", workflowFields(schema.P{
		"workspace_id": idProp("Workspace; default yours, else the first."),
		"steps":        stepSpecs("Steps in board order; the flagged start step, else the first, is the start step."),
	}), "name"),
	Run: (*Service).createWorkflow,
})

var _ = declare(Def[WorkflowUpdateIn, *kanban.Workflow]{
	Name:   kanban.ActionWorkflowUpdate,
	Effect: Writes,
	Tool:   "update_workflow_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"workflow_id": idProp("Workflow to change."),
		"name":        schema.Str("New name.").Len(1, kanban.MaxNameLen),
		"description": schema.Str("New description.").Len(0, kanban.MaxDescriptionLen),
	}, "workflow_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in WorkflowUpdateIn) (*kanban.Workflow, error) {
		w, err := s.workflowByID(ctx, p, in.WorkflowID)
		if err != nil {
			return nil, err
		}
		out, err := s.store.UpdateWorkflow(ctx, w.ID, in.Name, in.Description)
		if err != nil {
			return nil, err
		}
		kanban.EventWorkflowUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(out.WorkspaceID), out)
		return out, nil
	},
})

var _ = declare(Def[WorkflowDeleteIn, *Deleted]{
	Name:   kanban.ActionWorkflowDelete,
	Effect: Writes,
	Tool:   "delete_workflow_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"workflow_id": idProp("Workflow to delete."),
		"cascade":     schema.Bool("Also delete its tasks; else CONFLICT while it has any.").Default(false),
	}, "workflow_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in WorkflowDeleteIn) (*Deleted, error) {
		w, err := s.workflowByID(ctx, p, in.WorkflowID)
		if err != nil {
			return nil, err
		}
		if err := s.store.DeleteWorkflow(ctx, w.ID, in.Cascade); err != nil {
			return nil, err
		}
		kanban.EventWorkflowDeleted.PublishContext(ctx, s.pub, WorkspaceTopic(w.WorkspaceID), kanban.DeletedWorkflow{ID: w.ID, WorkspaceID: w.WorkspaceID})
		return &Deleted{ID: w.ID, Deleted: true}, nil
	},
})

var _ = declare(Def[WorkflowRefIn, *WorkflowDocument]{
	Name:   kanban.ActionWorkflowExport,
	Effect: Reads,
	Tool:   "export_workflow_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"workflow_id": idProp("Workflow to export."),
	}, "workflow_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in WorkflowRefIn) (*WorkflowDocument, error) {
		w, err := s.workflowByID(ctx, p, in.WorkflowID)
		if err != nil {
			return nil, err
		}
		steps, err := s.allSteps(ctx, w.ID)
		if err != nil {
			return nil, err
		}
		return exportWorkflow(w, steps, s.portableProfile(ctx)), nil
	},
})

var _ = declare(Def[WorkflowImportIn, *WorkflowImportOut]{
	Name:   kanban.ActionWorkflowImport,
	Effect: Writes,
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"workspace_id": idProp("Workspace; default yours, else the first."),
		"document": schema.Str(`The document: {"version":1,"type":"kandev_workflow","workflows":[...]} as JSON or YAML.`).
			Len(1, kanban.MaxWorkflowDocBytes),
		"template_id": schema.Enum("A built-in template (workflow.template.list) to create instead of a document.", TemplateIDs...),
		"name":        schema.Str("Name of the created workflow, for a template or a one-workflow document; default its own.").Len(1, kanban.MaxNameLen),
	}),
	Run: (*Service).importDocument,
})

// importDocument creates the document's workflows (or the template's) that
// the workspace does not have yet (by name), each atomically with its
// steps. The whole document is checked before anything is written.
func (s *Service) importDocument(ctx context.Context, p Principal, in WorkflowImportIn) (*WorkflowImportOut, error) {
	text, err := importText(in)
	if err != nil {
		return nil, err
	}
	doc, parsed, err := parseWorkflowDocument(text)
	if err != nil {
		return nil, err
	}
	if err := rename(in.Name, doc, parsed); err != nil {
		return nil, err
	}
	ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
	if err != nil {
		return nil, err
	}
	existing, err := s.workflowNames(ctx, ws)
	if err != nil {
		return nil, err
	}
	out := &WorkflowImportOut{Created: []string{}, Skipped: []string{}, Workflows: []WorkflowOut{}, Warnings: []string{}}
	for i := range parsed {
		dw := doc.Workflows[i]
		if existing[dw.Name] {
			out.Skipped = append(out.Skipped, dw.Name)
			continue
		}
		if err := s.bindProfiles(ctx, ws, i, dw, &parsed[i], &out.Warnings); err != nil {
			return nil, err
		}
		parsed[i].workflow.WorkspaceID = ws
		created, err := s.importWorkflow(ctx, parsed[i].workflow, parsed[i].steps)
		if err != nil {
			return nil, err
		}
		out.Created = append(out.Created, dw.Name)
		out.Workflows = append(out.Workflows, *created)
	}
	return out, nil
}

// bindProfiles matches the document workflow's portable agent profiles
// (the workflow's and its steps') to local ones usable in workspace ws;
// those that match nothing are left unbound, with a warning naming the
// field.
func (s *Service) bindProfiles(ctx context.Context, ws string, i int, dw DocWorkflow, pw *parsedWorkflow, warnings *[]string) error {
	bind := func(field string, d *DocAgentProfile, id *string) error {
		got, err := s.matchProfile(ctx, ws, d)
		if err != nil {
			return err
		}
		if d != nil && got == "" {
			*warnings = append(*warnings, field+": no local agent profile of that agent and model; the default profile is used")
		}
		*id = got
		return nil
	}
	field := fmt.Sprintf("document.workflows[%d]", i)
	if err := bind(field+".agent_profile", dw.AgentProfile, &pw.workflow.AgentProfileID); err != nil {
		return err
	}
	for at, j := range pw.order {
		if err := bind(fmt.Sprintf("%s.steps[%d].agent_profile", field, j), dw.Steps[j].AgentProfile, &pw.steps[at].AgentProfileID); err != nil {
			return err
		}
		if err := s.bindParticipants(ctx, ws, fmt.Sprintf("%s.steps[%d].approval", field, j), dw.Steps[j].Approval, pw.steps[at].Approval); err != nil {
			return err
		}
	}
	return nil
}

// workflowNames returns the names of a workspace's workflows.
func (s *Service) workflowNames(ctx context.Context, workspaceID string) (map[string]bool, error) {
	names := map[string]bool{}
	pg := kanban.Page{Limit: kanban.MaxLimit}
	for {
		l, err := s.store.ListWorkflows(ctx, workspaceID, pg)
		if err != nil {
			return nil, err
		}
		for _, w := range l.Items {
			names[w.Name] = true
		}
		if l.NextCursor == "" {
			return names, nil
		}
		pg.Cursor = l.NextCursor
	}
}

// createWorkflow creates a workflow, with its steps in the same transaction
// when the payload lists any.
func (s *Service) createWorkflow(ctx context.Context, p Principal, in WorkflowCreateIn) (*WorkflowOut, error) {
	ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
	if err != nil {
		return nil, err
	}
	w := kanban.Workflow{WorkspaceID: ws, Name: in.Name, Description: in.Description}
	if len(in.Steps) == 0 {
		out, err := s.store.CreateWorkflow(ctx, w)
		if err != nil {
			return nil, err
		}
		kanban.EventWorkflowCreated.PublishContext(ctx, s.pub, WorkspaceTopic(ws), out)
		return &WorkflowOut{Workflow: out, Steps: []kanban.WorkflowStep{}}, nil
	}
	steps, err := checkStepSpecs("steps", in.Steps)
	if err != nil {
		return nil, err
	}
	return s.importWorkflow(ctx, w, steps)
}

// importWorkflow creates a workflow with its steps atomically and announces it.
func (s *Service) importWorkflow(ctx context.Context, w kanban.Workflow, steps []kanban.WorkflowStep) (*WorkflowOut, error) {
	for _, st := range steps {
		if err := s.checkParticipants(ctx, w.WorkspaceID, st.Approval); err != nil {
			return nil, err
		}
	}
	out, outSteps, err := s.store.ImportWorkflow(ctx, w, steps)
	if err != nil {
		return nil, err
	}
	kanban.EventWorkflowCreated.PublishContext(ctx, s.pub, WorkspaceTopic(out.WorkspaceID), out)
	return &WorkflowOut{Workflow: out, Steps: outSteps}, nil
}

// workflowByID is workflowInScope for payloads whose id field is
// "workflow_id".
func (s *Service) workflowByID(ctx context.Context, p Principal, id string) (*kanban.Workflow, error) {
	if id == "" {
		return nil, kanban.FieldError("workflow_id", "is required")
	}
	return s.workflowInScope(ctx, p, id)
}

// allSteps reads every step of a workflow in board order, page by page.
func (s *Service) allSteps(ctx context.Context, workflowID string) ([]kanban.WorkflowStep, error) {
	var steps []kanban.WorkflowStep
	pg := kanban.Page{Limit: kanban.MaxLimit}
	for {
		l, err := s.store.ListSteps(ctx, workflowID, pg)
		if err != nil {
			return nil, err
		}
		steps = append(steps, l.Items...)
		if l.NextCursor == "" {
			return steps, nil
		}
		pg.Cursor = l.NextCursor
	}
}

// StepCreateIn is the payload of workflow.step.create: a workflow and the
// step's settings (AllowManualMove defaults to true).
type StepCreateIn struct {
	WorkflowID string `json:"workflow_id,omitzero"`
	// Position is where the step goes (0-based; later steps shift right);
	// omitted or past the end: last.
	Position *int `json:"position,omitzero"`
	StepSpec
}

// StepUpdateIn is the payload of workflow.step.update: set fields change.
type StepUpdateIn struct {
	StepID                string  `json:"step_id,omitzero"`
	Name                  *string `json:"name,omitzero"`
	Color                 *string `json:"color,omitzero"`
	Prompt                *string `json:"prompt,omitzero"`
	IsStartStep           *bool   `json:"is_start_step,omitzero"`
	AllowManualMove       *bool   `json:"allow_manual_move,omitzero"`
	AutoAdvance           *bool   `json:"auto_advance,omitzero"`
	WIPLimit              *int    `json:"wip_limit,omitzero"`
	AutoArchiveAfterHours *int    `json:"auto_archive_after_hours,omitzero"`
	HeartbeatMinutes      *int    `json:"heartbeat_minutes,omitzero"`
	// AutoAdvanceRequiresSignal and PullFromStepID ("" clears it).
	AutoAdvanceRequiresSignal  *bool   `json:"auto_advance_requires_signal,omitzero"`
	CancelTriggersTurnComplete *bool   `json:"cancel_triggers_turn_complete,omitzero"`
	ShowInCommandPanel         *bool   `json:"show_in_command_panel,omitzero"`
	PullFromStepID             *string `json:"pull_from_step_id,omitzero"`
	// PullFromStepPosition names the pull_from_step_id step by its
	// 0-based position in the workflow.
	PullFromStepPosition *int                           `json:"pull_from_step_position,omitzero"`
	Events               map[string][]kanban.StepAction `json:"events,omitzero"`
	// Approval replaces the step's participants and quorum;
	// ClearApproval removes them.
	Approval      *kanban.StepApproval `json:"approval,omitzero"`
	ClearApproval bool                 `json:"clear_approval,omitzero"`
}

// StepReorderIn is the payload of workflow.step.reorder: StepIDs lists
// every step of the workflow exactly once, in the new order.
type StepReorderIn struct {
	WorkflowID string   `json:"workflow_id,omitzero"`
	StepIDs    []string `json:"step_ids,omitzero"`
}

var _ = declare(Def[StepCreateIn, *kanban.WorkflowStep]{
	Name:   kanban.ActionWorkflowStepCreate,
	Effect: Writes,
	Tool:   "create_workflow_step_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", withStepFields(schema.P{
		"workflow_id": idProp("Workflow to add the step to."),
		"position":    schema.Int("0-based position; default last.").Range(0, kanban.MaxWorkflowSteps-1),
	}), "workflow_id", "name"),
	Run: (*Service).createStep,
})

var _ = declare(Def[StepUpdateIn, *kanban.WorkflowStep]{
	Name:   kanban.ActionWorkflowStepUpdate,
	Effect: Writes,
	Tool:   "update_workflow_step_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", withStepFields(schema.P{
		"step_id":        idProp("Step to change."),
		"clear_approval": schema.Bool("Remove the step's participants and quorum.").Default(false),
	}), "step_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in StepUpdateIn) (*kanban.WorkflowStep, error) {
		if err := checkStepUpdate(in); err != nil {
			return nil, err
		}
		st, w, err := s.stepInScope(ctx, p, "step_id", in.StepID)
		if err != nil {
			return nil, err
		}
		if in.PullFromStepID, err = s.pullFromStep(ctx, w.ID, in); err != nil {
			return nil, err
		}
		if err := s.checkParticipants(ctx, w.WorkspaceID, in.Approval); err != nil {
			return nil, err
		}
		out, err := s.store.UpdateStep(ctx, st.ID, kanban.StepUpdate{Approval: in.Approval, ClearApproval: in.ClearApproval, Name: in.Name, Color: in.Color, Prompt: in.Prompt,
			IsStartStep: in.IsStartStep, AllowManualMove: in.AllowManualMove, AutoAdvance: in.AutoAdvance,
			WIPLimit: in.WIPLimit, AutoArchiveAfterHours: in.AutoArchiveAfterHours, HeartbeatMinutes: in.HeartbeatMinutes, Events: in.Events,
			AutoAdvanceRequiresSignal: in.AutoAdvanceRequiresSignal, PullFromStepID: in.PullFromStepID,
			CancelTriggersTurnComplete: in.CancelTriggersTurnComplete, ShowInCommandPanel: in.ShowInCommandPanel})
		if err != nil {
			return nil, err
		}
		kanban.EventWorkflowStepUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(w.WorkspaceID), out)
		s.events.Emit(kanban.StepFreed{StepID: out.ID}) // a raised wip_limit or a new pull_from_step_id may admit tasks
		return out, nil
	},
})

var _ = declare(Def[StepRefIn, *Deleted]{
	Name:   kanban.ActionWorkflowStepDelete,
	Effect: Writes,
	Tool:   "delete_workflow_step_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"step_id": idProp("Step to delete."),
	}, "step_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in StepRefIn) (*Deleted, error) {
		st, w, err := s.stepInScope(ctx, p, "step_id", in.StepID)
		if err != nil {
			return nil, err
		}
		if err := s.store.DeleteStep(ctx, st.ID); err != nil {
			return nil, err
		}
		kanban.EventWorkflowStepDeleted.PublishContext(ctx, s.pub, WorkspaceTopic(w.WorkspaceID), kanban.DeletedStep{ID: st.ID, WorkflowID: st.WorkflowID})
		return &Deleted{ID: st.ID, Deleted: true}, nil
	},
})

var _ = declare(Def[StepReorderIn, *kanban.List[kanban.WorkflowStep]]{
	Name:   kanban.ActionWorkflowStepReorder,
	Effect: Writes,
	Tool:   "reorder_workflow_steps_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"workflow_id": idProp("Workflow whose steps to reorder."),
		"step_ids": schema.Arr("Every step id of the workflow, each once, in the new order.",
			idProp("A step id.")).Items(1, kanban.MaxWorkflowSteps).Unique(),
	}, "workflow_id", "step_ids"),
	Run: func(s *Service, ctx context.Context, p Principal, in StepReorderIn) (*kanban.List[kanban.WorkflowStep], error) {
		if len(in.StepIDs) == 0 {
			return nil, kanban.FieldError("step_ids", "is required")
		}
		w, err := s.workflowInScope(ctx, p, in.WorkflowID)
		if err != nil {
			return nil, err
		}
		steps, err := s.store.ReorderSteps(ctx, w.ID, in.StepIDs)
		if err != nil {
			return nil, err
		}
		kanban.EventWorkflowStepsReordered.PublishContext(ctx, s.pub, WorkspaceTopic(w.WorkspaceID), kanban.StepOrder{StepIDs: in.StepIDs, WorkflowID: w.ID})
		return &kanban.List[kanban.WorkflowStep]{Items: steps}, nil
	},
})

// createStep appends a step to a workflow the principal may configure.
func (s *Service) createStep(ctx context.Context, p Principal, in StepCreateIn) (*kanban.WorkflowStep, error) {
	st := in.toStep()
	// The contract holds the bounds; events are checked as they are encoded.
	if err := kanban.SingleLine("name", st.Name); err != nil {
		return nil, err
	}
	w, err := s.workflowInScope(ctx, p, in.WorkflowID)
	if err != nil {
		return nil, err
	}
	st.WorkflowID, st.InsertAt = w.ID, in.Position
	if err := s.checkParticipants(ctx, w.WorkspaceID, st.Approval); err != nil {
		return nil, err
	}
	out, err := s.store.CreateStep(ctx, st)
	if err != nil {
		return nil, err
	}
	kanban.EventWorkflowStepCreated.PublishContext(ctx, s.pub, WorkspaceTopic(w.WorkspaceID), out)
	return out, nil
}

// pullFromStep returns the update's pull_from_step_id, given directly or
// as pull_from_step_position: the id of the workflow's step at that
// position.
func (s *Service) pullFromStep(ctx context.Context, workflowID string, in StepUpdateIn) (*string, error) {
	if in.PullFromStepPosition == nil {
		return in.PullFromStepID, nil
	}
	if in.PullFromStepID != nil {
		return nil, kanban.FieldError("pull_from_step_position", "give pull_from_step_id or pull_from_step_position, not both")
	}
	steps, err := s.allSteps(ctx, workflowID)
	if err != nil {
		return nil, err
	}
	for _, st := range steps {
		if st.Position == *in.PullFromStepPosition {
			return &st.ID, nil
		}
	}
	return nil, kanban.FieldError("pull_from_step_position", "must be the position of a step of the workflow")
}
