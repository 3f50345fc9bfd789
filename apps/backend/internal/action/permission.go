package action

import (
	"context"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// PermissionListIn is the payload of permission.list.
type PermissionListIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
	TaskID      string `json:"task_id,omitzero"`
	SessionID   string `json:"session_id,omitzero"`
	// Status filters by state; default pending ("all" lists every state).
	Status string `json:"status,omitzero"`
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// PermissionResolveIn is the payload of permission.resolve: the ids a
// listing returned, unchanged, and one of the offered options.
type PermissionResolveIn struct {
	TaskID    string `json:"task_id,omitzero"`
	SessionID string `json:"session_id,omitzero"`
	RequestID string `json:"request_id,omitzero"`
	PendingID string `json:"pending_id,omitzero"`
	OptionID  string `json:"option_id,omitzero"`
}

// PermissionResolveOut is the result of permission.resolve: the stored
// request, and whether this call's option was the one applied (false when
// the request was already resolved, cancelled or expired).
type PermissionResolveOut struct {
	*kanban.Permission
	Claimed bool `json:"claimed"`
}

var _ = declare(Def[PermissionListIn, *kanban.List[kanban.Permission]]{
	Name:   kanban.ActionPermissionList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{
		"task_id":      idProp("The task whose agents' requests to list."),
		"session_id":   idProp("Only requests of this session (it must belong to task_id)."),
		"workspace_id": idProp("Only requests of this workspace's tasks."),
		"status": schema.Enum("State to list (default pending; all: every state).",
			append(slices.Clone(kanban.PermissionStates), kanban.PermissionAnyState)...),
	})),
	Run: (*Service).listPermissions,
})

var _ = declare(Def[PermissionResolveIn, *PermissionResolveOut]{
	Name:   kanban.ActionPermissionResolve,
	Effect: Writes,
	Tool:   "resolve_agent_permission_kandev",
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"task_id":    idProp("The request's task."),
		"session_id": idProp("The request's session."),
		"request_id": idProp("Kandev's id of the request."),
		"pending_id": schema.Str("The agent's id of what it asks about.").Len(1, kanban.MaxPermissionIDLen),
		"option_id":  schema.Str("The chosen option's option_id.").Len(1, kanban.MaxPermissionIDLen),
	}, "task_id", "session_id", "request_id", "pending_id", "option_id"),
	Run: (*Service).resolvePermission,
})

func (s *Service) listPermissions(ctx context.Context, _ Principal, in PermissionListIn) (*kanban.List[kanban.Permission], error) {
	f := kanban.PermissionFilter{WorkspaceID: in.WorkspaceID, TaskID: in.TaskID, SessionID: in.SessionID, State: in.Status}
	switch in.Status {
	case "":
		f.State = kanban.PermissionPending
	case kanban.PermissionAnyState:
		f.State = ""
	}
	if in.SessionID != "" {
		sess, err := s.store.GetSession(ctx, in.SessionID)
		if err != nil {
			return nil, err
		}
		if in.TaskID != "" && sess.TaskID != in.TaskID {
			return nil, kanban.FieldError("session_id", "must be a session of task_id")
		}
	}
	if in.TaskID != "" {
		if _, err := s.store.GetTask(ctx, in.TaskID); err != nil {
			return nil, err
		}
	}
	return s.store.ListPermissions(ctx, f, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
}

// resolvePermission answers a pending request with one of its options;
// the first answer wins.
func (s *Service) resolvePermission(ctx context.Context, _ Principal, in PermissionResolveIn) (*PermissionResolveOut, error) {
	cur, err := s.store.GetPermission(ctx, in.RequestID)
	if err != nil || cur.TaskID != in.TaskID || cur.SessionID != in.SessionID || cur.PendingID != in.PendingID {
		// One answer for every mismatch: ids of other requests are not revealed.
		return nil, kanban.NotFound("permission request")
	}
	p, claimed, err := s.store.ResolvePermission(ctx, cur.ID, in.OptionID, "operator")
	if err != nil {
		return nil, err
	}
	if claimed {
		s.agents.PermissionResolved(p.ID)
		kanban.EventPermissionResolved.PublishContext(ctx, s.pub, SessionTopic(p.SessionID), p)
		kanban.EventPermissionResolved.PublishContext(ctx, s.pub, WorkspaceTopic(p.WorkspaceID), p)
	}
	return &PermissionResolveOut{Permission: p, Claimed: claimed}, nil
}
