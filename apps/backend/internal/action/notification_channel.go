package action

import (
	"context"
	"maps"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// A workspace's outgoing notification channels and their delivery log:
// the operator's configuration alone. A channel's URL and secret go in
// and never come out — every result shows the URL's scheme only
// (kanban.Channel.URLHint) and whether a secret is set.

// ChannelCreateIn is the payload of notification.channel.create.
type ChannelCreateIn struct {
	WorkspaceID string                    `json:"workspace_id,omitzero"`
	Name        string                    `json:"name,omitzero"`
	Type        kanban.ChannelType        `json:"type,omitzero"`
	URL         string                    `json:"url,omitzero"`
	Secret      string                    `json:"secret,omitzero"`
	Events      []kanban.NotificationKind `json:"events,omitzero"`
	Enabled     *bool                     `json:"enabled,omitzero"`
}

// ChannelListIn is the payload of notification.channel.list.
type ChannelListIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
	Limit       int    `json:"limit,omitzero"`
	Cursor      string `json:"cursor,omitzero"`
}

// ChannelUpdateIn is the payload of notification.channel.update: the
// fields set change.
type ChannelUpdateIn struct {
	ID      string                    `json:"id,omitzero"`
	Name    *string                   `json:"name,omitzero"`
	URL     *string                   `json:"url,omitzero"`
	Secret  *string                   `json:"secret,omitzero"`
	Events  []kanban.NotificationKind `json:"events,omitzero"`
	Enabled *bool                     `json:"enabled,omitzero"`
}

// ChannelDeleteIn is the payload of notification.channel.delete.
type ChannelDeleteIn struct {
	ID string `json:"id,omitzero"`
}

// ChannelDeleted is the result of notification.channel.delete.
type ChannelDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// DeliveryListIn is the payload of notification.delivery.list.
type DeliveryListIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
	ChannelID   string `json:"channel_id,omitzero"`
	Limit       int    `json:"limit,omitzero"`
	Cursor      string `json:"cursor,omitzero"`
}

// channelProps adds a channel's fields to p.
func channelProps(p schema.P) schema.P {
	maps.Copy(p, schema.P{
		"name":    schema.Str("A label for the channel.").Len(1, kanban.MaxNameLen),
		"url":     schema.Str("The Apprise URL (service://…) or the webhook's http(s) URL; kept on the server, never shown again.").Len(1, kanban.MaxChannelURLLen),
		"secret":  schema.Str("The webhook's signing secret (HMAC-SHA256); kept on the server, never shown again.").Len(kanban.MinWebhookSecretLen, kanban.MaxWebhookSecretLen),
		"events":  schema.Arr("The kinds of notification sent to it.", schema.Enum("A kind.", strs(kanban.NotificationKinds)...)).Items(0, len(kanban.NotificationKinds)).Unique(),
		"enabled": schema.Bool("Whether it is sent anything (default true)."),
	})
	return p
}

var _ = declare(Def[ChannelCreateIn, *kanban.Channel]{
	Name:   kanban.ActionNotificationChannelCreate,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", channelProps(schema.P{
		"workspace_id": notifyWorkspaceProp(),
		"type":         schema.Enum("apprise (the apprise CLI) or webhook (a signed JSON POST).", strs(kanban.ChannelTypes)...),
	}), "name", "type", "url", "events"),
	Run: func(s *Service, ctx context.Context, p Principal, in ChannelCreateIn) (*kanban.Channel, error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		enabled := in.Enabled == nil || *in.Enabled
		return s.store.CreateChannel(ctx, kanban.Channel{WorkspaceID: ws, Name: in.Name, Type: in.Type, URL: kanban.NewSecret(in.URL),
			Secret: kanban.NewSecret(in.Secret), Events: in.Events, Enabled: enabled})
	},
})

var _ = declare(Def[ChannelListIn, *kanban.List[kanban.Channel]]{
	Name:   kanban.ActionNotificationChannelList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{"workspace_id": notifyWorkspaceProp()})),
	Run: func(s *Service, ctx context.Context, p Principal, in ChannelListIn) (*kanban.List[kanban.Channel], error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		return s.store.ListChannels(ctx, ws, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[ChannelUpdateIn, *kanban.Channel]{
	Name:   kanban.ActionNotificationChannelUpdate,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", channelProps(schema.P{"id": idProp("The channel.")}), "id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in ChannelUpdateIn) (*kanban.Channel, error) {
		u := kanban.ChannelUpdate{Name: in.Name, Events: in.Events, Enabled: in.Enabled}
		if in.URL != nil {
			v := kanban.NewSecret(*in.URL)
			u.URL = &v
		}
		if in.Secret != nil {
			v := kanban.NewSecret(*in.Secret)
			u.Secret = &v
		}
		return s.store.UpdateChannel(ctx, in.ID, u)
	},
})

var _ = declare(Def[ChannelDeleteIn, *ChannelDeleted]{
	Name:   kanban.ActionNotificationChannelDelete,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{"id": idProp("The channel.")}, "id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in ChannelDeleteIn) (*ChannelDeleted, error) {
		if err := s.store.DeleteChannel(ctx, in.ID); err != nil {
			return nil, err
		}
		return &ChannelDeleted{ID: in.ID, Deleted: true}, nil
	},
})

var _ = declare(Def[DeliveryListIn, *kanban.List[kanban.Delivery]]{
	Name:   kanban.ActionNotificationDeliveryList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{
		"workspace_id": notifyWorkspaceProp(),
		"channel_id":   idProp("Only this channel's deliveries."),
	})),
	Run: func(s *Service, ctx context.Context, p Principal, in DeliveryListIn) (*kanban.List[kanban.Delivery], error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		return s.store.ListDeliveries(ctx, ws, in.ChannelID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})
