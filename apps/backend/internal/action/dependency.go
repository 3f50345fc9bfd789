package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

var _ = declare(Def[DependencyIn, *kanban.TaskDependency]{
	Name:   kanban.ActionTaskDependencyAdd,
	Effect: Writes,
	Tool:   "add_task_dependency_kandev",
	Allow:  all,
	Schema: dependencyInput(),
	Run: func(s *Service, ctx context.Context, p Principal, in DependencyIn) (*kanban.TaskDependency, error) {
		a, b, err := s.dependencyPair(ctx, p, in)
		if err != nil {
			return nil, err
		}
		d, err := s.store.AddDependency(ctx, a, b)
		if err != nil {
			return nil, err
		}
		kanban.EventTaskDependencyAdded.PublishContext(ctx, s.pub, WorkspaceTopic(p.WorkspaceID), d)
		return d, nil
	},
})

var _ = declare(Def[DependencyIn, *Deleted]{
	Name:   kanban.ActionTaskDependencyRemove,
	Effect: Writes,
	Tool:   "remove_task_dependency_kandev",
	Allow:  all,
	Schema: dependencyInput(),
	Run: func(s *Service, ctx context.Context, p Principal, in DependencyIn) (*Deleted, error) {
		a, b, err := s.dependencyPair(ctx, p, in)
		if err != nil {
			return nil, err
		}
		if err := s.store.RemoveDependency(ctx, a, b); err != nil {
			return nil, err
		}
		return &Deleted{ID: a, Deleted: true}, nil
	},
})

var _ = declare(Def[TaskListRelIn, *kanban.List[kanban.Task]]{
	Name:   kanban.ActionTaskDependencyList,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{
		"task_id":   ownTaskRef("The task"),
		"direction": schema.Enum("blockers (default): tasks it waits for; blocked: tasks waiting for it.", kanban.DependencyDirections...),
	}), "task_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in TaskListRelIn) (*kanban.List[kanban.Task], error) {
		t, err := s.taskInScope(ctx, p, in.TaskID)
		if err != nil {
			return nil, err
		}
		pg := kanban.Page{Limit: in.Limit, Cursor: in.Cursor}
		switch in.Direction {
		case kanban.RelatedBlockers, "":
			return s.store.ListBlockers(ctx, t.ID, pg)
		case kanban.RelatedBlocked:
			return s.store.ListBlocked(ctx, t.ID, pg)
		}
		return nil, kanban.FieldError("direction", "must be one of: blockers, blocked")
	},
})

// dependencyPair resolves both ends. A session may only change the edges
// of its own task ("self" or its id).
func (s *Service) dependencyPair(ctx context.Context, p Principal, in DependencyIn) (string, string, error) {
	taskID := in.TaskID
	if taskID == "" {
		taskID = "self"
	}
	a, err := resolveTaskID(p, taskID)
	if err != nil {
		return "", "", err
	}
	if p.Kind == Session && a != p.TaskID {
		return "", "", kanban.Errorf(kanban.CodeForbidden, "a session may only change its own task's dependencies")
	}
	if in.DependsOnTaskID == "" {
		return "", "", kanban.FieldError("depends_on_task_id", "is required")
	}
	b, err := resolveTaskID(p, in.DependsOnTaskID)
	if err != nil {
		return "", "", err
	}
	for _, id := range []string{a, b} {
		if _, err := s.taskInScope(ctx, p, id); err != nil {
			return "", "", err
		}
	}
	return a, b, nil
}

// dependencyInput names an edge: task_id is blocked by depends_on_task_id.
func dependencyInput() schema.S {
	return schema.Obj("", schema.P{
		"task_id":            selfTaskRef(`The blocked task; default "self" (a session's only; required on the external endpoint).`),
		"depends_on_task_id": taskRef("The blocking task."),
	}, "depends_on_task_id")
}
