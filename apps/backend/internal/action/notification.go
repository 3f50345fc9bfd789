package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// The workspace's notification inbox and its settings: the operator's
// alone (no agent reads what it is told of; no MCP tool serves them).
// Notifications are recorded by package notify, from domain events and
// published events, never by these actions.

// NotificationListIn is the payload of notification.list; an empty
// WorkspaceID means the first workspace.
type NotificationListIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
	UnreadOnly  bool   `json:"unread_only,omitzero"`
	Limit       int    `json:"limit,omitzero"`
	Cursor      string `json:"cursor,omitzero"`
}

// NotificationMarkReadIn is the payload of notification.mark_read: ids,
// or all.
type NotificationMarkReadIn struct {
	WorkspaceID string   `json:"workspace_id,omitzero"`
	IDs         []string `json:"ids,omitzero"`
	All         bool     `json:"all,omitzero"`
}

// NotifySettingsIn is the payload of notification.settings.get.
type NotifySettingsIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
}

// NotifySettingSetIn is the payload of notification.settings.set.
type NotifySettingSetIn struct {
	WorkspaceID string                  `json:"workspace_id,omitzero"`
	Kind        kanban.NotificationKind `json:"kind,omitzero"`
	Inbox       bool                    `json:"inbox,omitzero"`
}

// NotifySettingsOut is a workspace's inbox setting of every kind.
type NotifySettingsOut struct {
	WorkspaceID string                 `json:"workspace_id"`
	Settings    []kanban.NotifySetting `json:"settings"`
}

func notifyWorkspaceProp() schema.S {
	return idProp("The workspace; default the first.")
}

var _ = declare(Def[NotificationListIn, *kanban.NotificationList]{
	Name:   kanban.ActionNotificationList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{
		"workspace_id": notifyWorkspaceProp(),
		"unread_only":  schema.Bool("Only the unread notifications."),
	})),
	Run: func(s *Service, ctx context.Context, p Principal, in NotificationListIn) (*kanban.NotificationList, error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		return s.store.ListNotifications(ctx, ws, in.UnreadOnly, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[NotificationMarkReadIn, *kanban.NotificationsRead]{
	Name:   kanban.ActionNotificationMarkRead,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"workspace_id": notifyWorkspaceProp(),
		"ids":          schema.Arr("The notifications to mark read.", idProp("A notification.")).Items(1, kanban.MaxReadIDs).Unique(),
		"all":          schema.Bool("Mark every unread notification of the workspace read."),
	}),
	Run: func(s *Service, ctx context.Context, p Principal, in NotificationMarkReadIn) (*kanban.NotificationsRead, error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		out, err := s.store.MarkNotificationsRead(ctx, ws, in.IDs, in.All)
		if err != nil {
			return nil, err
		}
		kanban.EventNotificationsRead.PublishContext(ctx, s.pub, WorkspaceTopic(ws), out)
		return out, nil
	},
})

var _ = declare(Def[NotifySettingsIn, *NotifySettingsOut]{
	Name:   kanban.ActionNotificationSettingsGet,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{"workspace_id": notifyWorkspaceProp()}),
	Run: func(s *Service, ctx context.Context, p Principal, in NotifySettingsIn) (*NotifySettingsOut, error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		return s.notifySettings(ctx, ws)
	},
})

var _ = declare(Def[NotifySettingSetIn, *NotifySettingsOut]{
	Name:   kanban.ActionNotificationSettingsSet,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"workspace_id": notifyWorkspaceProp(),
		"kind":         schema.Enum("The kind of notification.", strs(kanban.NotificationKinds)...),
		"inbox":        schema.Bool("Whether the inbox records this kind (channels follow their own events)."),
	}, "kind", "inbox"),
	Run: func(s *Service, ctx context.Context, p Principal, in NotifySettingSetIn) (*NotifySettingsOut, error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		if err := s.store.SetNotifySetting(ctx, ws, kanban.NotifySetting{Kind: in.Kind, Inbox: in.Inbox}); err != nil {
			return nil, err
		}
		return s.notifySettings(ctx, ws)
	},
})

func (s *Service) notifySettings(ctx context.Context, ws string) (*NotifySettingsOut, error) {
	st, err := s.store.NotifySettings(ctx, ws)
	if err != nil {
		return nil, err
	}
	return &NotifySettingsOut{WorkspaceID: ws, Settings: st}, nil
}
