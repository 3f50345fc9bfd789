package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// SessionUsageIn is the payload of session.usage: the session, and the
// page of its turns.
type SessionUsageIn struct {
	ID     string `json:"id,omitzero"`
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// SessionUsageOut is the result of session.usage: the session's totals
// (every turn) and a page of its newest turns (the newest
// kanban.MaxUsageTurnRows are kept).
type SessionUsageOut struct {
	Usage *kanban.SessionUsage           `json:"usage"`
	Turns *kanban.List[kanban.TurnUsage] `json:"turns"`
}

// TaskUsageIn is the payload of task.usage.
type TaskUsageIn struct {
	TaskID string `json:"task_id,omitzero"`
}

// WorkspaceUsageIn is the payload of workspace.usage.
type WorkspaceUsageIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
}

// UsageOut is the result of task.usage and workspace.usage: the sums of
// their sessions.
type UsageOut struct {
	TaskID      string `json:"task_id,omitempty"`
	WorkspaceID string `json:"workspace_id"`
	*kanban.UsageTotals
}

var _ = declare(Def[SessionUsageIn, *SessionUsageOut]{
	Name:   kanban.ActionSessionUsage,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{
		"id": idProp("The session."),
	}), "id"),
	Run: func(s *Service, ctx context.Context, p Principal, in SessionUsageIn) (*SessionUsageOut, error) {
		sess, err := s.sessionInScope(ctx, p, in.ID)
		if err != nil {
			return nil, err
		}
		u, turns, err := s.store.SessionUsage(ctx, sess.ID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
		if err != nil {
			return nil, err
		}
		return &SessionUsageOut{Usage: u, Turns: turns}, nil
	},
})

var _ = declare(Def[TaskUsageIn, *UsageOut]{
	Name:   kanban.ActionTaskUsage,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", schema.P{"task_id": ownTaskRef("The task")}, "task_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in TaskUsageIn) (*UsageOut, error) {
		t, err := s.taskInScope(ctx, p, in.TaskID)
		if err != nil {
			return nil, err
		}
		u, err := s.store.TaskUsage(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		return &UsageOut{TaskID: t.ID, WorkspaceID: t.WorkspaceID, UsageTotals: u}, nil
	},
})

var _ = declare(Def[WorkspaceUsageIn, *UsageOut]{
	Name:   kanban.ActionWorkspaceUsage,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", schema.P{"workspace_id": idProp("The workspace; default the first (a session's own).")}),
	Run: func(s *Service, ctx context.Context, p Principal, in WorkspaceUsageIn) (*UsageOut, error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		u, err := s.store.WorkspaceUsage(ctx, ws)
		if err != nil {
			return nil, err
		}
		return &UsageOut{WorkspaceID: ws, UsageTotals: u}, nil
	},
})
