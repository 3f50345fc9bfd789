package action

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
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

var _ = declare(Def[PlanCreateIn, *kanban.Plan]{
	Name:   kanban.ActionPlanCreate,
	Effect: Writes,
	Tool:   "create_task_plan_kandev",
	Allow:  all,
	Schema: planInput("Plan title.", "The plan, in markdown."),
	Run: func(s *Service, ctx context.Context, p Principal, in PlanCreateIn) (*kanban.Plan, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, planReach, planForbidden)
		if err != nil {
			return nil, err
		}
		out, err := s.store.CreatePlan(ctx, kanban.Plan{TaskID: t.ID, Title: in.Title, Content: in.Content, CreatedBy: authorOf(p)})
		return s.publishPlan(t, out, err)
	},
})

var _ = declare(Def[TaskRefIn, *kanban.Plan]{
	Name:   kanban.ActionPlanGet,
	Effect: Reads,
	Tool:   "get_task_plan_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{"task_id": planTaskRef()}),
	Run: func(s *Service, ctx context.Context, p Principal, in TaskRefIn) (*kanban.Plan, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, planReach, planForbidden)
		if err != nil {
			return nil, err
		}
		return s.store.GetPlan(ctx, t.ID)
	},
})

var _ = declare(Def[PlanUpdateIn, *kanban.Plan]{
	Name:   kanban.ActionPlanUpdate,
	Effect: Writes,
	Tool:   "update_task_plan_kandev",
	Allow:  all,
	Schema: planInput("New title; omit to keep it.", "The whole new plan, in markdown."),
	Run: func(s *Service, ctx context.Context, p Principal, in PlanUpdateIn) (*kanban.Plan, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, planReach, planForbidden)
		if err != nil {
			return nil, err
		}
		out, err := s.store.UpdatePlan(ctx, t.ID, in.Title, in.Content, authorOf(p))
		return s.publishPlan(t, out, err)
	},
})

var _ = declare(Def[TaskRefIn, *Deleted]{
	Name:   kanban.ActionPlanDelete,
	Effect: Writes,
	Tool:   "delete_task_plan_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{"task_id": planTaskRef()}),
	Run: func(s *Service, ctx context.Context, p Principal, in TaskRefIn) (*Deleted, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, planReach, planForbidden)
		if err != nil {
			return nil, err
		}
		if err := s.store.DeletePlan(ctx, t.ID); err != nil {
			return nil, err
		}
		kanban.EventPlanDeleted.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), kanban.DeletedPlan{TaskID: t.ID})
		return &Deleted{ID: t.ID, Deleted: true}, nil
	},
})

var _ = declare(Def[TaskPageIn, *kanban.List[kanban.Plan]]{
	Name:   kanban.ActionPlanRevisions,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{"task_id": ownTaskRef("The plan's task")})),
	Run: func(s *Service, ctx context.Context, p Principal, in TaskPageIn) (*kanban.List[kanban.Plan], error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, planReach, planForbidden)
		if err != nil {
			return nil, err
		}
		return s.store.ListPlanRevisions(ctx, t.ID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

// publishPlan announces a written plan (passing a write's error through).
func (s *Service) publishPlan(t *kanban.Task, pl *kanban.Plan, err error) (*kanban.Plan, error) {
	if err != nil {
		return nil, err
	}
	kanban.EventPlanUpdated.Publish(s.pub, WorkspaceTopic(t.WorkspaceID), pl)
	return pl, nil
}

var _ = declare(Def[TaskPageIn, *kanban.List[kanban.Document]]{
	Name:   kanban.ActionDocumentList,
	Effect: Reads,
	Tool:   "list_task_documents_kandev",
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{
		"task_id": docTaskRef(", an ancestor or a descendant."),
	})),
	Run: func(s *Service, ctx context.Context, p Principal, in TaskPageIn) (*kanban.List[kanban.Document], error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, docReadReach, docReadForbidden)
		if err != nil {
			return nil, err
		}
		return s.store.ListDocuments(ctx, t.ID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[DocumentGetIn, *kanban.Document]{
	Name:   kanban.ActionDocumentGet,
	Effect: Reads,
	Tool:   "get_task_document_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id":      docTaskRef(", an ancestor or a descendant."),
		"document_key": schema.Str("The document's key.").Pattern(kanban.DocumentKeyPattern),
	}, "document_key"),
	Run: func(s *Service, ctx context.Context, p Principal, in DocumentGetIn) (*kanban.Document, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, docReadReach, docReadForbidden)
		if err != nil {
			return nil, err
		}
		return s.store.GetDocument(ctx, t.ID, in.Key)
	},
})

var _ = declare(Def[DocumentWriteIn, *kanban.Document]{
	Name:   kanban.ActionDocumentWrite,
	Effect: Writes,
	Tool:   "write_task_document_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id":      docTaskRef(" or an ancestor."),
		"document_key": schema.Str("Document key.").Pattern(kanban.DocumentKeyPattern),
		"type":         schema.Enum("Content type; a new document defaults to markdown.", kanban.DocumentTypes...),
		"title":        schema.Str("Document title.").Len(1, kanban.MaxPlanTitleLen),
		"content":      schema.Str("The whole document content.").Len(0, kanban.MaxContentLen),
	}, "document_key", "content"),
	Run: func(s *Service, ctx context.Context, p Principal, in DocumentWriteIn) (*kanban.Document, error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, docWriteReach, docWriteForbidden)
		if err != nil {
			return nil, err
		}
		out, err := s.store.WriteDocument(ctx, kanban.Document{TaskID: t.ID, Key: in.Key, Type: in.Type, Title: in.Title, Content: in.Content})
		if err != nil {
			return nil, err
		}
		kanban.EventDocumentUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), out)
		return out, nil
	},
})

var _ = declare(Def[ArtifactCreateIn, *kanban.Artifact]{
	Name:   kanban.ActionArtifactCreate,
	Effect: Writes,
	Allow:  all,
	Schema: artifactCreateSchema(),
	Run: func(s *Service, ctx context.Context, p Principal, in ArtifactCreateIn) (*kanban.Artifact, error) {
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
		kanban.EventArtifactCreated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), out)
		return out, nil
	},
})

var _ = declare(Def[ArtifactKindIn, *kanban.Artifact]{
	Name:   kanban.ActionArtifactLatest,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", schema.P{"task_id": artifactTaskRef("Task whose walkthrough to read"), "kind": artifactKind()}, "kind"),
	Run: func(s *Service, ctx context.Context, p Principal, in ArtifactKindIn) (*kanban.Artifact, error) {
		t, err := s.taskFor(ctx, p, in.TaskID)
		if err != nil {
			return nil, err
		}
		return s.store.LatestArtifact(ctx, t.ID, in.Kind)
	},
})

var _ = declare(Def[ArtifactListIn, *kanban.List[kanban.Artifact]]{
	Name:   kanban.ActionArtifactList,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{"task_id": ownTaskRef("The task"), "kind": artifactKind()})),
	Run: func(s *Service, ctx context.Context, p Principal, in ArtifactListIn) (*kanban.List[kanban.Artifact], error) {
		t, err := s.taskFor(ctx, p, in.TaskID)
		if err != nil {
			return nil, err
		}
		return s.store.ListArtifacts(ctx, t.ID, in.Kind, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[ArtifactKindIn, *ArtifactDeleteOut]{
	Name:   kanban.ActionArtifactDelete,
	Effect: Writes,
	Allow:  all,
	Schema: schema.Obj("", schema.P{"task_id": artifactTaskRef("Task whose walkthroughs to delete"), "kind": artifactKind()}, "kind"),
	Run: func(s *Service, ctx context.Context, p Principal, in ArtifactKindIn) (*ArtifactDeleteOut, error) {
		t, err := s.mutableTask(ctx, p, in.TaskID)
		if err != nil {
			return nil, err
		}
		n, err := s.store.DeleteArtifacts(ctx, t.ID, in.Kind, time.Time{})
		if err != nil {
			return nil, err
		}
		if n > 0 {
			kanban.EventArtifactDeleted.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), kanban.DeletedArtifacts{Deleted: n, Kind: in.Kind, TaskID: t.ID})
		}
		return &ArtifactDeleteOut{Deleted: n}, nil
	},
})

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

// planTaskRef is the task_id of the plan actions: the bound task's tree only.
func planTaskRef() schema.S {
	return selfTaskRef(`Task of the plan: yours ("self", default), an ancestor or a descendant.`)
}

// planInput is the payload of the plan writes: the task, a title and the
// markdown content (required).
func planInput(titleDesc, contentDesc string) schema.S {
	return schema.Obj("", schema.P{
		"task_id": planTaskRef(),
		"title":   schema.Str(titleDesc).Len(1, kanban.MaxPlanTitleLen),
		"content": schema.Str(contentDesc).Len(1, kanban.MaxContentLen),
	}, "content")
}

// docTaskRef is the task_id of the document actions.
func docTaskRef(reach string) schema.S {
	return selfTaskRef(`Task of the document: yours ("self", default)` + reach)
}
