package notify

import (
	"context"
	"errors"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// job is one delivery of a notification to a channel.
type job struct {
	d  kanban.Delivery
	ch kanban.Channel
	n  kanban.Notification
}

// outcome is how one try went: the HTTP status or exit code, whether
// another try may succeed, and the failure in our own words (never a
// URL, a secret or what the receiver said).
type outcome struct {
	status int
	retry  bool
	err    error
}

// queueDeliveries logs a queued delivery per subscribed channel and
// queues it; a full queue logs it dropped instead (never waits).
func (n *Notifier) queueDeliveries(ctx context.Context, note kanban.Notification) error {
	channels, err := n.cfg.Store.ChannelsFor(ctx, note.WorkspaceID, note.Kind)
	if err != nil {
		return err
	}
	for _, ch := range channels {
		d, err := n.cfg.Store.AddDelivery(ctx, kanban.Delivery{ChannelID: ch.ID, WorkspaceID: note.WorkspaceID, NotificationID: note.ID,
			Kind: note.Kind, State: kanban.DeliveryQueuedState})
		if err != nil {
			return err
		}
		select {
		case n.jobs <- job{d: *d, ch: ch, n: note}:
		default:
			d.State, d.Error = kanban.DeliveryDropped, "the delivery queue was full"
			if err := n.cfg.Store.UpdateDelivery(ctx, *d); err != nil {
				return err
			}
		}
	}
	return nil
}

// deliver sends queued deliveries until the notifier stops.
func (n *Notifier) deliver() {
	defer n.wg.Done()
	for {
		select {
		case <-n.ctx.Done():
			return
		case j := <-n.jobs:
			n.send(n.ctx, j)
		}
	}
}

// send tries a delivery up to Attempts times, waiting Backoff (doubled
// each time) between tries that may succeed later, and logs each try.
func (n *Notifier) send(ctx context.Context, j job) {
	d, wait := j.d, n.cfg.Backoff
	for {
		d.Attempts++
		o := n.try(ctx, j, d.ID)
		d.Status = o.status
		switch {
		case o.err == nil:
			d.State, d.Error = kanban.DeliveryDelivered, ""
		case o.retry && d.Attempts < n.cfg.Attempts && ctx.Err() == nil:
			d.State, d.Error = kanban.DeliveryQueuedState, o.err.Error()
		default:
			d.State, d.Error = kanban.DeliveryFailed, o.err.Error()
		}
		if err := n.cfg.Store.UpdateDelivery(context.WithoutCancel(ctx), d); err != nil {
			n.log.Warn("notifications: log a delivery", "channel", d.ChannelID, "err", err)
		}
		if d.State != kanban.DeliveryQueuedState {
			return
		}
		select {
		case <-ctx.Done():
			d.State, d.Error = kanban.DeliveryFailed, "the backend stopped before the delivery succeeded"
			if err := n.cfg.Store.UpdateDelivery(context.WithoutCancel(ctx), d); err != nil {
				n.log.Warn("notifications: log a delivery", "channel", d.ChannelID, "err", err)
			}
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// try makes one attempt, bounded by Timeout.
func (n *Notifier) try(ctx context.Context, j job, deliveryID string) outcome {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	switch j.ch.Type {
	case kanban.ChannelWebhook:
		return n.webhook(ctx, j, deliveryID)
	case kanban.ChannelApprise:
		return n.apprise(ctx, j)
	}
	return outcome{err: errors.New("unknown channel type")}
}
