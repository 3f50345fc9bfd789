package app

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/notify"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// newNotifier builds and starts the backend's notifier (see package
// notify) and returns the publisher the other parts publish through: pub,
// tapped, so that the events this backend publishes become notifications
// here (once each, whichever backend hears them). It reacts to the domain
// events too (turns that ended), and stops before the store closes.
func (b *backend) newNotifier(cfg Config, pub kanban.Publisher) kanban.Publisher {
	nc := cfg.Notify
	nc.Store, nc.Publisher, nc.Logger, nc.Secret = b.store, pub, cfg.Logger, b.secrets.Resolve
	b.notify = notify.New(nc)
	if b.store.Engine() == store.SQLite {
		// One process owns a SQLite board: what it queued before it
		// stopped is lost. (On PostgreSQL another backend may be sending.)
		if n, err := b.store.FailQueuedDeliveries(b.life.ctx, "the backend restarted before the delivery was sent"); err != nil {
			cfg.Logger.Warn("notifications: close the deliveries of an earlier process", "err", err)
		} else if n > 0 {
			cfg.Logger.Info("notifications: deliveries an earlier process left queued marked failed", "count", n)
		}
	}
	b.events.React(b.notify.React)
	b.notify.Start(b.life.ctx)
	b.life.push("notifications", func(ctx context.Context) error { b.notify.Close(ctx); return nil })
	return b.notify.Tap(pub)
}
