package kanban

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// NotificationKind is what a notification tells the operator of.
type NotificationKind string

// The notification kinds.
const (
	// NotifyTurnFinished: an agent ended a turn on a task (it waits for
	// review or a message).
	NotifyTurnFinished NotificationKind = "turn_finished"
	// NotifyQuestionAsked: an agent asked the operator a question.
	NotifyQuestionAsked NotificationKind = "question_asked"
	// NotifyPermissionNeeded: an agent waits for a permission.
	NotifyPermissionNeeded NotificationKind = "permission_needed"
	// NotifyTaskFailed: a task's agent session failed.
	NotifyTaskFailed NotificationKind = "task_failed"
	// NotifyPRStateChanged: a task's pull request changed state (merged,
	// closed, its checks failing or passing, approved or changes
	// requested: kanban.PullRequestStateChanged).
	NotifyPRStateChanged NotificationKind = "pr_state_changed"
)

// NotificationKinds lists every kind, in display order.
var NotificationKinds = []NotificationKind{NotifyTurnFinished, NotifyQuestionAsked, NotifyPermissionNeeded, NotifyTaskFailed, NotifyPRStateChanged}

// Valid reports whether k is a declared kind.
func (k NotificationKind) Valid() bool { return slices.Contains(NotificationKinds, k) }

// Bounds of notifications, their channels and their delivery.
const (
	MaxNotificationTitleLen = 200      // a notification's title (clipped, not refused: it quotes a task's title)
	MaxNotificationBodyLen  = 2000     // a notification's body (clipped)
	MaxNotificationDedupLen = 200      // a notification's dedup key
	MaxReadIDs              = 200      // notifications one notification.read names
	MaxChannelURLLen        = 2048     // an Apprise URL or a webhook URL
	MinWebhookSecretLen     = 16       // a webhook's signing secret
	MaxWebhookSecretLen     = 256      // (HMAC keys longer than the hash block gain nothing)
	MaxChannelsPerWorkspace = 20       // channels one workspace holds
	MaxDeliveryErrorLen     = 300      // the safe text a delivery records of its failure
	MaxWebhookBody          = 64 << 10 // the JSON body a webhook sends
)

// Notification is one entry of a workspace's inbox.
type Notification struct {
	ID          string           `json:"id"`
	WorkspaceID string           `json:"workspace_id"`
	Kind        NotificationKind `json:"kind"`
	TaskID      string           `json:"task_id,omitempty"`
	SessionID   string           `json:"session_id,omitempty"`
	Title       string           `json:"title"`
	Body        string           `json:"body,omitempty"`
	ReadAt      *time.Time       `json:"read_at,omitempty"`
	CreatedAt   time.Time        `json:"created_at"`
	// DedupKey names the event the notification is of (one notification
	// per event, whichever backend saw it).
	DedupKey string `json:"-"`
}

// NotificationList is a page of an inbox and its unread count.
type NotificationList struct {
	List[Notification]
	Unread int `json:"unread"`
}

// NotifySetting is whether a workspace's inbox records a kind.
type NotifySetting struct {
	Kind  NotificationKind `json:"kind"`
	Inbox bool             `json:"inbox"`
}

// NotificationsRead is the payload of notification.read (the event) and
// the result of the action: how many were marked and what stays unread.
type NotificationsRead struct {
	WorkspaceID string   `json:"workspace_id"`
	IDs         []string `json:"ids,omitempty"`
	All         bool     `json:"all,omitempty"`
	Marked      int      `json:"marked"`
	Unread      int      `json:"unread"`
}

// ChannelType is how a channel delivers.
type ChannelType string

// The channel types.
const (
	ChannelApprise ChannelType = "apprise" // the apprise CLI, one Apprise URL
	ChannelWebhook ChannelType = "webhook" // a signed JSON POST
)

// ChannelTypes lists the channel types.
var ChannelTypes = []ChannelType{ChannelApprise, ChannelWebhook}

// Secret is text only the server may read (a channel's URL, a signing
// secret): every fmt verb and JSON show "[redacted]", so a secret that
// reaches a log line or a reply by mistake shows nothing. Reveal it only
// where it is used.
type Secret struct{ v string }

// NewSecret wraps v.
func NewSecret(v string) Secret { return Secret{v: v} }

// Reveal returns the secret's text.
func (s Secret) Reveal() string { return s.v }

// Set reports whether the secret holds any text.
func (s Secret) Set() bool { return s.v != "" }

// String, GoString, Format, MarshalJSON and MarshalText all show
// "[redacted]": no verb, encoder or log line can reveal a Secret.
func (Secret) String() string { return "[redacted]" }

// GoString shows "[redacted]" (%#v).
func (Secret) GoString() string { return "[redacted]" }

// MarshalJSON encodes "[redacted]".
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// MarshalText encodes "[redacted]" (slog, text encoders).
func (Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Format writes "[redacted]" whatever the verb.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte("[redacted]")) }

// Channel is an outgoing channel of a workspace's notifications. Its URL
// and secret never leave the server: URLHint shows the URL's scheme only.
type Channel struct {
	ID          string             `json:"id"`
	WorkspaceID string             `json:"workspace_id"`
	Name        string             `json:"name"`
	Type        ChannelType        `json:"type"`
	URLHint     string             `json:"url"`
	HasSecret   bool               `json:"has_secret"`
	Events      []NotificationKind `json:"events"`
	Enabled     bool               `json:"enabled"`
	CreatedAt   time.Time          `json:"created_at"`
	UpdatedAt   time.Time          `json:"updated_at"`
	// URL and Secret are the target and the webhook's signing secret.
	URL    Secret `json:"-"`
	Secret Secret `json:"-"`
}

// ChannelUpdate changes a channel's fields that are set.
type ChannelUpdate struct {
	Name    *string
	Events  []NotificationKind // nil keeps them
	Enabled *bool
	URL     *Secret
	Secret  *Secret
}

// DeliveryState is where one delivery to a channel is.
type DeliveryState string

// The delivery states.
const (
	DeliveryQueuedState DeliveryState = "queued"    // waiting in the queue or between attempts
	DeliveryDelivered   DeliveryState = "delivered" // the channel accepted it
	DeliveryFailed      DeliveryState = "failed"    // every attempt failed, or it was refused
	DeliveryDropped     DeliveryState = "dropped"   // the queue was full
)

// Delivery is one notification sent (or not) to one channel.
type Delivery struct {
	ID             string           `json:"id"`
	ChannelID      string           `json:"channel_id"`
	WorkspaceID    string           `json:"workspace_id"`
	NotificationID string           `json:"notification_id"`
	Kind           NotificationKind `json:"kind"`
	State          DeliveryState    `json:"state"`
	Attempts       int              `json:"attempts"`
	// Status is the last attempt's HTTP status (webhook) or exit code (apprise).
	Status    int       `json:"status"`
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// NotificationService stores inboxes, their settings, channels and the
// delivery log. Its errors: NOT_FOUND for a missing workspace or
// channel, VALIDATION_ERROR for bad fields, CONFLICT past the channel
// bound.
type NotificationService interface {
	// AddNotification records n unless one with its DedupKey exists;
	// created says whether it did.
	AddNotification(ctx context.Context, n Notification) (out *Notification, created bool, err error)
	// ListNotifications lists a workspace's inbox, newest first.
	ListNotifications(ctx context.Context, workspaceID string, unreadOnly bool, p Page) (*NotificationList, error)
	// MarkNotificationsRead marks ids (or every unread one with all) of a
	// workspace read; ids of other workspaces are not touched.
	MarkNotificationsRead(ctx context.Context, workspaceID string, ids []string, all bool) (*NotificationsRead, error)
	// NotifySettings returns a workspace's setting of every kind.
	NotifySettings(ctx context.Context, workspaceID string) ([]NotifySetting, error)
	SetNotifySetting(ctx context.Context, workspaceID string, s NotifySetting) error
	CreateChannel(ctx context.Context, c Channel) (*Channel, error)
	GetChannel(ctx context.Context, id string) (*Channel, error)
	ListChannels(ctx context.Context, workspaceID string, p Page) (*List[Channel], error)
	UpdateChannel(ctx context.Context, id string, u ChannelUpdate) (*Channel, error)
	DeleteChannel(ctx context.Context, id string) error
	// ChannelsFor returns the enabled channels of a workspace subscribed
	// to kind, with their URL and secret (for the notifier alone).
	ChannelsFor(ctx context.Context, workspaceID string, kind NotificationKind) ([]Channel, error)
	AddDelivery(ctx context.Context, d Delivery) (*Delivery, error)
	UpdateDelivery(ctx context.Context, d Delivery) error
	// ListDeliveries lists a workspace's delivery log (of one channel
	// when channelID is set), newest first.
	ListDeliveries(ctx context.Context, workspaceID, channelID string, p Page) (*List[Delivery], error)
	// FailQueuedDeliveries marks what an earlier process left queued as
	// failed (interrupted by a restart); it returns how many.
	FailQueuedDeliveries(ctx context.Context, reason string) (int, error)
}
