package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// SetTitleIn is the payload of task.set_title.
type SetTitleIn struct {
	Title string `json:"title,omitzero"`
}

// SetTitleOut is the result of task.set_title.
type SetTitleOut struct {
	Task *kanban.Task `json:"task"`
	// Mode is the session's mode afterwards (task).
	Mode kanban.Mode `json:"mode"`
}

// setTitle sets the bound task's title while the session's title is
// pending, then switches the session to task mode through SetMode, so its
// MCP server rebuilds its tool set (one list_changed; the title tool goes).
func (s *Service) setTitle(ctx context.Context, p Principal, in SetTitleIn) (*SetTitleOut, error) {
	if err := kanban.SingleLine("title", in.Title); err != nil {
		return nil, err
	}
	sess, err := s.store.GetSession(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if sess.MCPMode != kanban.ModeTaskTitlePending {
		return nil, kanban.Errorf(kanban.CodeForbidden, "the title can only be set while the session's mode is task-title-pending")
	}
	t, err := s.store.UpdateTask(ctx, p.TaskID, kanban.TaskUpdate{Title: &in.Title})
	if err != nil {
		return nil, err
	}
	kanban.EventTaskUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), t)
	sess, err = s.SetMode(ctx, p.SessionID, kanban.ModeTask)
	if err != nil {
		return nil, err
	}
	return &SetTitleOut{Task: t, Mode: sess.MCPMode}, nil
}
