// Package notify turns what happens on the board into notifications: an
// entry in the workspace's inbox (published live as notification.created)
// and a delivery to each of the workspace's channels subscribed to its
// kind — an Apprise URL (the apprise CLI, run bounded) or a signed
// webhook (HMAC-SHA256, retried with backoff).
//
// It listens, and is never called by the actions: it reacts to domain
// events (a turn ended, a pull request's state changed) and taps the events this backend publishes (a
// question asked, a permission requested, a session failed). A reaction
// only offers the event to a bounded queue and returns at once; when the
// queue is full the event is dropped (and counted), never waited for.
// Deliveries wait in a second bounded queue; one that finds it full is
// logged as dropped.
//
// Channel URLs and secrets stay in the store and in this package: they
// are never logged, never put in a process's arguments and never echoed
// in a delivery's error.
//
// It imports kanban and the standard library; it must not import the
// store, the action layer or any transport.
package notify

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Store is what the notifier reads and writes.
type Store interface {
	kanban.NotificationService
	GetTask(ctx context.Context, id string) (*kanban.Task, error)
}

// Config configures a Notifier; zero fields take the defaults below.
type Config struct {
	Store Store
	// Publisher carries notification.created to the workspace's
	// subscribers (the board).
	Publisher kanban.Publisher
	Logger    *slog.Logger
	// Apprise is the apprise CLI (default "apprise" on PATH).
	Apprise string
	// Queue bounds the events waiting to become notifications (256);
	// DeliveryQueue the deliveries waiting for a worker (256); Workers
	// send them (2).
	Queue, DeliveryQueue, Workers int
	// Attempts bounds the tries of one delivery (4); Backoff is the wait
	// after the first failed try (1s), doubled after each; Timeout bounds
	// one try (10s).
	Attempts         int
	Backoff, Timeout time.Duration
	// Client sends webhooks (default: no redirects followed, Timeout).
	Client *http.Client
	// Secret resolves an Apprise channel's "secret:NAME" URL to the named
	// secret's value, read for each delivery and given only to that
	// apprise process (nil: such channels fail to deliver).
	Secret func(ctx context.Context, ref string) (string, error)
}

// Notifier records and delivers notifications; see the package doc.
type Notifier struct {
	cfg     Config
	log     *slog.Logger
	intake  chan item
	jobs    chan job
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	dropped atomic.Int64
	closed  atomic.Bool
}

// New builds a notifier; Start runs it.
func New(cfg Config) *Notifier {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.Queue, 256)
	def(&cfg.DeliveryQueue, 256)
	def(&cfg.Workers, 2)
	def(&cfg.Attempts, 4)
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Apprise == "" {
		cfg.Apprise = "apprise"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: cfg.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Notifier{cfg: cfg, log: cfg.Logger, intake: make(chan item, cfg.Queue), jobs: make(chan job, cfg.DeliveryQueue)}
}

// Start runs the notifier's workers under ctx until Close.
func (n *Notifier) Start(ctx context.Context) {
	n.ctx, n.cancel = context.WithCancel(ctx)
	n.wg.Add(1 + n.cfg.Workers)
	go n.record()
	for range n.cfg.Workers {
		go n.deliver()
	}
}

// Close stops taking events and stops the workers (a delivery in flight
// is cancelled), waiting for them until ctx ends.
func (n *Notifier) Close(ctx context.Context) {
	n.closed.Store(true)
	if n.cancel == nil {
		return
	}
	n.cancel()
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Dropped is how many events found the queue full.
func (n *Notifier) Dropped() int64 { return n.dropped.Load() }

// React is the domain-event reaction: a turn that ended (not cancelled)
// becomes turn_finished, a pull request's state change pr_state_changed.
func (n *Notifier) React(ev kanban.DomainEvent) {
	switch ev := ev.(type) {
	case kanban.TurnEvent:
		if ev.Ended && ev.StopReason != "cancelled" && ev.TaskID != "" {
			n.offer(item{turn: &ev})
		}
	case kanban.PullRequestStateChanged:
		if ev.PR.TaskID != "" && ev.Key != "" {
			n.offer(item{pr: &ev})
		}
	}
}

// Tap returns a publisher that publishes through next and offers the
// events notifications are made of (on workspace topics) to the queue.
func (n *Notifier) Tap(next kanban.Publisher) kanban.Publisher { return tap{next: next, n: n} }

type tap struct {
	next kanban.Publisher
	n    *Notifier
}

func (t tap) Publish(topic, event string, payload any) {
	t.next.Publish(topic, event, payload)
	t.offer(topic, event, payload)
}

// PublishContext is Publish through next's PublishContext (the call's
// trace reaches the other backends).
func (t tap) PublishContext(ctx context.Context, topic, event string, payload any) {
	kanban.PublishContext(ctx, t.next, topic, event, payload)
	t.offer(topic, event, payload)
}

// offer offers the events of workspace topics to the queue.
func (t tap) offer(topic, event string, payload any) {
	if strings.HasPrefix(topic, "workspace:") {
		if it, ok := fromEvent(event, payload); ok {
			t.n.offer(it)
		}
	}
}

// offer queues it, or drops it when the queue is full: never waits.
func (n *Notifier) offer(it item) {
	if n.closed.Load() {
		return
	}
	select {
	case n.intake <- it:
	default:
		if d := n.dropped.Add(1); d == 1 || d%100 == 0 {
			n.log.Warn("notifications: the event queue is full; events dropped", "dropped", d)
		}
	}
}
