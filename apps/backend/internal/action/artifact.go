package action

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TaskRefIn is the payload of actions on one task's plan ("self" allowed
// for sessions).
type TaskRefIn struct {
	TaskID string `json:"task_id,omitzero"`
}

// TaskPageIn is the payload of lists scoped to one task.
type TaskPageIn struct {
	TaskID string `json:"task_id,omitzero"`
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// PlanCreateIn is the payload of plan.create.
type PlanCreateIn struct {
	TaskID  string `json:"task_id,omitzero"`
	Title   string `json:"title,omitzero"`
	Content string `json:"content,omitzero"`
}

// PlanUpdateIn is the payload of plan.update: a new revision; Title nil
// keeps the current title.
type PlanUpdateIn struct {
	TaskID  string  `json:"task_id,omitzero"`
	Title   *string `json:"title,omitzero"`
	Content string  `json:"content,omitzero"`
}

// DocumentGetIn is the payload of document.get.
type DocumentGetIn struct {
	TaskID string `json:"task_id,omitzero"`
	Key    string `json:"document_key,omitzero"`
}

// DocumentWriteIn is the payload of document.write: creates the document
// or stores its next revision.
type DocumentWriteIn struct {
	TaskID  string `json:"task_id,omitzero"`
	Key     string `json:"document_key,omitzero"`
	Type    string `json:"type,omitzero"`
	Title   string `json:"title,omitzero"`
	Content string `json:"content,omitzero"`
}

// ArtifactCreateIn is the payload of artifact.create; Data is a JSON object.
type ArtifactCreateIn struct {
	TaskID string          `json:"task_id,omitzero"`
	Kind   string          `json:"kind,omitzero"`
	Data   json.RawMessage `json:"data,omitzero"`
}

// ArtifactKindIn is the payload of artifact.latest and artifact.delete.
type ArtifactKindIn struct {
	TaskID string `json:"task_id,omitzero"`
	Kind   string `json:"kind,omitzero"`
}

// ArtifactListIn is the payload of artifact.list; an empty Kind lists every kind.
type ArtifactListIn struct {
	TaskID string `json:"task_id,omitzero"`
	Kind   string `json:"kind,omitzero"`
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// ArtifactDeleteOut is the result of artifact.delete.
type ArtifactDeleteOut struct {
	Deleted int `json:"deleted"`
}

// registerArtifacts registers plans, documents and session artifacts. A
// session reaches only tasks of its workspace; "self" is its bound task.
func (s *Service) registerArtifacts(r *Registry) {
	s.registerPlans(r)
	s.registerDocuments(r)
	s.registerSessionArtifacts(r)
}

func (s *Service) registerPlans(r *Registry) {
	all := AllowOperator | AllowSession
	Register(r, kanban.ActionPlanCreate, all, func(ctx context.Context, p Principal, in PlanCreateIn) (*kanban.Plan, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, planReach, planForbidden)
		if err != nil {
			return nil, err
		}
		out, err := s.store.CreatePlan(ctx, kanban.Plan{TaskID: t.ID, Title: in.Title, Content: in.Content, CreatedBy: authorOf(p)})
		return s.publishPlan(t, out, err)
	})
	Register(r, kanban.ActionPlanGet, all, func(ctx context.Context, p Principal, in TaskRefIn) (*kanban.Plan, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, planReach, planForbidden)
		if err != nil {
			return nil, err
		}
		return s.store.GetPlan(ctx, t.ID)
	})
	Register(r, kanban.ActionPlanUpdate, all, func(ctx context.Context, p Principal, in PlanUpdateIn) (*kanban.Plan, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, planReach, planForbidden)
		if err != nil {
			return nil, err
		}
		out, err := s.store.UpdatePlan(ctx, t.ID, in.Title, in.Content, authorOf(p))
		return s.publishPlan(t, out, err)
	})
	Register(r, kanban.ActionPlanDelete, all, func(ctx context.Context, p Principal, in TaskRefIn) (*Deleted, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, planReach, planForbidden)
		if err != nil {
			return nil, err
		}
		if err := s.store.DeletePlan(ctx, t.ID); err != nil {
			return nil, err
		}
		kanban.EventPlanDeleted.Publish(s.pub, WorkspaceTopic(t.WorkspaceID), kanban.DeletedPlan{TaskID: t.ID})
		return &Deleted{ID: t.ID, Deleted: true}, nil
	})
	Register(r, kanban.ActionPlanRevisions, all, func(ctx context.Context, p Principal, in TaskPageIn) (*kanban.List[kanban.Plan], error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, planReach, planForbidden)
		if err != nil {
			return nil, err
		}
		return s.store.ListPlanRevisions(ctx, t.ID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	})
}

// publishPlan announces a written plan (passing a write's error through).
func (s *Service) publishPlan(t *kanban.Task, pl *kanban.Plan, err error) (*kanban.Plan, error) {
	if err != nil {
		return nil, err
	}
	kanban.EventPlanUpdated.Publish(s.pub, WorkspaceTopic(t.WorkspaceID), pl)
	return pl, nil
}

func (s *Service) registerDocuments(r *Registry) {
	all := AllowOperator | AllowSession
	Register(r, kanban.ActionDocumentList, all, func(ctx context.Context, p Principal, in TaskPageIn) (*kanban.List[kanban.Document], error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, docReadReach, docReadForbidden)
		if err != nil {
			return nil, err
		}
		return s.store.ListDocuments(ctx, t.ID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	})
	Register(r, kanban.ActionDocumentGet, all, func(ctx context.Context, p Principal, in DocumentGetIn) (*kanban.Document, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, docReadReach, docReadForbidden)
		if err != nil {
			return nil, err
		}
		return s.store.GetDocument(ctx, t.ID, in.Key)
	})
	Register(r, kanban.ActionDocumentWrite, all, func(ctx context.Context, p Principal, in DocumentWriteIn) (*kanban.Document, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, docWriteReach, docWriteForbidden)
		if err != nil {
			return nil, err
		}
		out, err := s.store.WriteDocument(ctx, kanban.Document{TaskID: t.ID, Key: in.Key, Type: in.Type, Title: in.Title, Content: in.Content})
		if err != nil {
			return nil, err
		}
		kanban.EventDocumentUpdated.Publish(s.pub, WorkspaceTopic(t.WorkspaceID), out)
		return out, nil
	})
}

func (s *Service) registerSessionArtifacts(r *Registry) {
	all := AllowOperator | AllowSession
	Register(r, kanban.ActionArtifactCreate, all, func(ctx context.Context, p Principal, in ArtifactCreateIn) (*kanban.Artifact, error) {
		if d := bytes.TrimSpace(in.Data); len(d) == 0 || d[0] != '{' {
			return nil, kanban.FieldError("data", "is required and must be a JSON object")
		}
		if err := checkArtifactData(in.Kind, in.Data); err != nil {
			return nil, err
		}
		t, err := s.mutableTask(ctx, p, in.TaskID)
		if err != nil {
			return nil, err
		}
		if in.Kind == kanban.ArtifactRichOutput {
			if in.Data, err = s.expandRichOutput(ctx, t, in.Data); err != nil {
				return nil, err
			}
		}
		a := kanban.Artifact{TaskID: t.ID, Kind: in.Kind, Data: in.Data}
		if p.Kind == Session {
			a.SessionID = p.SessionID
		}
		out, err := s.store.CreateArtifact(ctx, a)
		if err != nil {
			return nil, err
		}
		kanban.EventArtifactCreated.Publish(s.pub, WorkspaceTopic(t.WorkspaceID), out)
		return out, nil
	})
	Register(r, kanban.ActionArtifactLatest, all, func(ctx context.Context, p Principal, in ArtifactKindIn) (*kanban.Artifact, error) {
		t, err := s.taskFor(ctx, p, in.TaskID)
		if err != nil {
			return nil, err
		}
		return s.store.LatestArtifact(ctx, t.ID, in.Kind)
	})
	Register(r, kanban.ActionArtifactList, all, func(ctx context.Context, p Principal, in ArtifactListIn) (*kanban.List[kanban.Artifact], error) {
		t, err := s.taskFor(ctx, p, in.TaskID)
		if err != nil {
			return nil, err
		}
		return s.store.ListArtifacts(ctx, t.ID, in.Kind, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	})
	Register(r, kanban.ActionArtifactDelete, all, func(ctx context.Context, p Principal, in ArtifactKindIn) (*ArtifactDeleteOut, error) {
		t, err := s.mutableTask(ctx, p, in.TaskID)
		if err != nil {
			return nil, err
		}
		n, err := s.store.DeleteArtifacts(ctx, t.ID, in.Kind)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			kanban.EventArtifactDeleted.Publish(s.pub, WorkspaceTopic(t.WorkspaceID), kanban.DeletedArtifacts{Deleted: n, Kind: in.Kind, TaskID: t.ID})
		}
		return &ArtifactDeleteOut{Deleted: n}, nil
	})
}

// taskFor resolves a required task_id ("self" for sessions) to a task the
// principal may reach.
func (s *Service) taskFor(ctx context.Context, p Principal, taskID string) (*kanban.Task, error) {
	if taskID == "" {
		return nil, kanban.FieldError("task_id", "is required")
	}
	return s.taskInScope(ctx, p, taskID)
}

// authorOf names who wrote a plan revision.
func authorOf(p Principal) string {
	if p.Kind == Session {
		return "agent"
	}
	return "operator"
}
