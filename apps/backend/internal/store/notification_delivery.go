package store

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The delivery log (notification_deliveries): one row per notification
// and channel, from queued to delivered, failed or dropped. Its error
// text is the notifier's own safe wording (never a URL, a secret or a
// receiver's reply), clipped to MaxDeliveryErrorLen.

const deliveryCols = `id, channel_id, workspace_id, notification_id, kind, state, attempts, status, error, created_at, updated_at`

func scanDelivery(r rowSource) (*kanban.Delivery, error) {
	var d kanban.Delivery
	var created, updated string
	if err := r.Scan(&d.ID, &d.ChannelID, &d.WorkspaceID, &d.NotificationID, &d.Kind, &d.State, &d.Attempts, &d.Status, &d.Error,
		&created, &updated); err != nil {
		return nil, err
	}
	d.CreatedAt, d.UpdatedAt = parseTime(created), parseTime(updated)
	return &d, nil
}

// AddDelivery records a delivery of a notification to a channel.
// NOT_FOUND when the channel is missing.
func (s *Store) AddDelivery(ctx context.Context, d kanban.Delivery) (*kanban.Delivery, error) {
	now := kanban.Now()
	d.ID, d.CreatedAt, d.UpdatedAt, d.Error = kanban.NewID(), now, now, kanban.Clip(d.Error, kanban.MaxDeliveryErrorLen)
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "notification_channels", "notification channel", d.ChannelID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO notification_deliveries (`+deliveryCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			d.ID, d.ChannelID, d.WorkspaceID, d.NotificationID, string(d.Kind), string(d.State), d.Attempts, d.Status, d.Error,
			fmtTime(now), fmtTime(now))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("add delivery: %w", err)
	}
	return &d, nil
}

// UpdateDelivery records a delivery's state, attempts, status and error
// (a delivery whose channel was deleted since is gone: nothing to do).
func (s *Store) UpdateDelivery(ctx context.Context, d kanban.Delivery) error {
	err := s.tx(ctx, func(tx txn) error {
		_, err := tx.ExecContext(ctx, `UPDATE notification_deliveries SET state = ?, attempts = ?, status = ?, error = ?, updated_at = ?
			WHERE id = ?`, string(d.State), d.Attempts, d.Status, kanban.Clip(d.Error, kanban.MaxDeliveryErrorLen), fmtTime(kanban.Now()), d.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("update delivery: %w", err)
	}
	return nil
}

var deliveryListing = listing[kanban.Delivery]{what: "list deliveries",
	selectFrom: `SELECT ` + deliveryCols + ` FROM notification_deliveries`, scan: scanDelivery, cols: []string{"created_at", "id"}, desc: true,
	key: func(d kanban.Delivery) []any { return []any{fmtTime(d.CreatedAt), d.ID} }}

// ListDeliveries lists a workspace's delivery log, newest first (one
// channel's when channelID is set). NOT_FOUND when the workspace or the
// channel is missing.
func (s *Store) ListDeliveries(ctx context.Context, workspaceID, channelID string, p kanban.Page) (*kanban.List[kanban.Delivery], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "workspaces", "workspace", workspaceID); err != nil {
		return nil, err
	}
	if channelID == "" {
		return deliveryListing.page(ctx, s.stmts, p, `workspace_id = ?`, workspaceID)
	}
	if err := requireRow(ctx, s.stmts, "notification_channels", "notification channel", channelID); err != nil {
		return nil, err
	}
	return deliveryListing.page(ctx, s.stmts, p, `workspace_id = ? AND channel_id = ?`, workspaceID, channelID)
}

// FailQueuedDeliveries marks every queued delivery failed with reason (at
// start: what an earlier process queued was lost with it).
func (s *Store) FailQueuedDeliveries(ctx context.Context, reason string) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE notification_deliveries SET state = ?, error = ?, updated_at = ? WHERE state = ?`,
			string(kanban.DeliveryFailed), kanban.Clip(reason, kanban.MaxDeliveryErrorLen), fmtTime(kanban.Now()), string(kanban.DeliveryQueuedState))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("fail queued deliveries: %w", err)
	}
	return int(n), nil
}
