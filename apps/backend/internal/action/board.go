package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// IDIn is the payload of actions that take one id.
type IDIn struct {
	ID string `json:"id,omitzero"`
}

// WorkflowRefIn names one workflow (its tool's workflow_id).
type WorkflowRefIn struct {
	WorkflowID string `json:"workflow_id,omitzero"`
}

// StepRefIn names one workflow step (its tool's step_id).
type StepRefIn struct {
	StepID string `json:"step_id,omitzero"`
}

// ProfileRefIn names one agent or executor profile (its tool's profile_id).
type ProfileRefIn struct {
	ProfileID string `json:"profile_id,omitzero"`
}

// ListIn is the payload of unfiltered lists.
type ListIn struct {
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

func (l ListIn) page() kanban.Page { return kanban.Page{Limit: l.Limit, Cursor: l.Cursor} }

// WorkspaceCreateIn is the payload of workspace.create.
type WorkspaceCreateIn struct {
	Name        string `json:"name,omitzero"`
	Description string `json:"description,omitzero"`
}

// WorkspaceUpdateIn is the payload of workspace.update.
type WorkspaceUpdateIn struct {
	ID          string  `json:"id,omitzero"`
	Name        *string `json:"name,omitzero"`
	Description *string `json:"description,omitzero"`
}

// WorkflowListIn is a page of a workspace's items: the payload of
// workflow.list, routine.list and approval.list.
type WorkflowListIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
	Limit       int    `json:"limit,omitzero"`
	Cursor      string `json:"cursor,omitzero"`
}

// StepListIn is the payload of workflow.step.list.
type StepListIn struct {
	WorkflowID string `json:"workflow_id,omitzero"`
	Limit      int    `json:"limit,omitzero"`
	Cursor     string `json:"cursor,omitzero"`
}

var _ = declare(Def[ListIn, *kanban.List[kanban.Workspace]]{
	Name:   kanban.ActionWorkspaceList,
	Effect: Reads,
	Tool:   "list_workspaces_kandev",
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{})),
	Run: func(s *Service, ctx context.Context, p Principal, in ListIn) (*kanban.List[kanban.Workspace], error) {
		if p.Kind == Session {
			w, err := s.store.GetWorkspace(ctx, p.WorkspaceID)
			if err != nil {
				return nil, err
			}
			return &kanban.List[kanban.Workspace]{Items: []kanban.Workspace{*w}}, nil
		}
		return s.store.ListWorkspaces(ctx, in.page())
	},
})

var _ = declare(Def[IDIn, *kanban.Workspace]{
	Name:   kanban.ActionWorkspaceGet,
	Effect: Reads,
	Allow:  all,
	Schema: idOnly("The workspace."),
	Run: func(s *Service, ctx context.Context, p Principal, in IDIn) (*kanban.Workspace, error) {
		id, err := s.workspaceFor(ctx, p, in.ID)
		if err != nil {
			return nil, err
		}
		return s.store.GetWorkspace(ctx, id)
	},
})

var _ = declare(Def[WorkspaceCreateIn, *kanban.Workspace]{
	Name:   kanban.ActionWorkspaceCreate,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"name":        schema.Str("Name.").Len(1, kanban.MaxNameLen),
		"description": schema.Str("Description.").Len(0, kanban.MaxDescriptionLen),
	}, "name"),
	Run: func(s *Service, ctx context.Context, _ Principal, in WorkspaceCreateIn) (*kanban.Workspace, error) {
		return s.store.CreateWorkspace(ctx, in.Name, in.Description)
	},
})

var _ = declare(Def[WorkspaceUpdateIn, *kanban.Workspace]{
	Name:   kanban.ActionWorkspaceUpdate,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"id":          idProp("The workspace."),
		"name":        schema.Str("New name.").Len(1, kanban.MaxNameLen),
		"description": schema.Str("New description.").Len(0, kanban.MaxDescriptionLen),
	}, "id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in WorkspaceUpdateIn) (*kanban.Workspace, error) {
		return s.store.UpdateWorkspace(ctx, in.ID, in.Name, in.Description)
	},
})

var _ = declare(Def[WorkflowListIn, *kanban.List[kanban.Workflow]]{
	Name:   kanban.ActionWorkflowList,
	Effect: Reads,
	Tool:   "list_workflows_kandev",
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{
		"workspace_id": idProp("Workspace whose workflows to list."),
	}), "workspace_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in WorkflowListIn) (*kanban.List[kanban.Workflow], error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		return s.store.ListWorkflows(ctx, ws, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[IDIn, *kanban.Workflow]{
	Name:   kanban.ActionWorkflowGet,
	Effect: Reads,
	Allow:  all,
	Schema: idOnly("The workflow."),
	Run: func(s *Service, ctx context.Context, p Principal, in IDIn) (*kanban.Workflow, error) {
		return s.workflowInScope(ctx, p, in.ID)
	},
})

var _ = declare(Def[StepListIn, *kanban.List[kanban.WorkflowStep]]{
	Name:   kanban.ActionWorkflowStepList,
	Effect: Reads,
	Tool:   "list_workflow_steps_kandev",
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{
		"workflow_id": idProp("Workflow whose steps to list."),
	}), "workflow_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in StepListIn) (*kanban.List[kanban.WorkflowStep], error) {
		if _, err := s.workflowInScope(ctx, p, in.WorkflowID); err != nil {
			return nil, err
		}
		return s.store.ListSteps(ctx, in.WorkflowID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[IDIn, *kanban.WorkflowStep]{
	Name:   kanban.ActionWorkflowStepGet,
	Effect: Reads,
	Allow:  all,
	Schema: idOnly("The step."),
	Run: func(s *Service, ctx context.Context, p Principal, in IDIn) (*kanban.WorkflowStep, error) {
		st, _, err := s.stepInScope(ctx, p, "step_id", in.ID)
		return st, err
	},
})

// workflowInScope loads a workflow a principal may see.
func (s *Service) workflowInScope(ctx context.Context, p Principal, id string) (*kanban.Workflow, error) {
	if id == "" {
		return nil, kanban.FieldError("workflow_id", "is required")
	}
	w, err := s.store.GetWorkflow(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := confine(p, w.WorkspaceID, "workflow"); err != nil {
		return nil, err
	}
	return w, nil
}

// stepInScope loads a step a principal may see and its workflow; field
// names the id in the VALIDATION_ERROR for an empty one.
func (s *Service) stepInScope(ctx context.Context, p Principal, field, id string) (*kanban.WorkflowStep, *kanban.Workflow, error) {
	if id == "" {
		return nil, nil, kanban.FieldError(field, "is required")
	}
	st, err := s.store.GetStep(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	w, err := s.workflowInScope(ctx, p, st.WorkflowID)
	if err != nil {
		return nil, nil, err
	}
	return st, w, nil
}
