// Package prwatch holds the watches of a task's open pull requests: it
// polls each one's forge with conditional requests (a 304 costs no rate
// limit), backs off on errors and rate limits, and takes webhook
// deliveries (GitHub's HMAC signature, GitLab's secret token checked)
// into the same path; it turns
// what it sees into typed events — new review comments, reviews and their
// verdict, review requests, finished checks with the failing check's log
// excerpt, merges and closes — and decides the PR automation: the
// auto-fix prompt, the merge (of the head that was checked), the
// lifecycle prompts. A Sink (the wiring) receives the events.
//
// Exactly once: a poll records what it saw, the record's bookkeeping and
// the events it decided in one store transaction, over the version of the
// pull request it claimed, before anything is acted on; each event has a
// key unique per pull request, so what a webhook and a poll both saw, or
// two backends, is recorded once; each recorded event is claimed by one
// backend, and one whose backend died while acting on it is interrupted,
// not redone. A restart or a second backend never repeats a prompt or a
// merge.
//
// It imports kanban, store, forge and credential; not the action layer,
// the transports or the app (which implements Sink and Forges).
package prwatch

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// Defaults of Config.
const (
	DefaultInterval    = time.Minute // a watched pull request's poll interval (the reference's)
	DefaultConcurrency = 4           // pull requests polled at once
	DefaultLease       = 5 * time.Minute
	DefaultMaxAttempts = 5
	DefaultBackendTTL  = 15 * time.Second
	// pollTimeout bounds one poll's forge calls.
	pollTimeout = 2 * time.Minute
	// idle bounds a wait for work: other backends' writes and retries
	// that came due are seen within it.
	idle = 30 * time.Second
	// maxWebhookReads bounds the webhook deliveries read at once (each up
	// to forge.MaxWebhookBody before its signature can be checked).
	maxWebhookReads = 4
)

// Store is what the watcher reads and writes (*store.Store).
type Store interface {
	ClaimDuePullRequests(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]kanban.PullRequest, error)
	NextPollDue(ctx context.Context) (*time.Time, error)
	RecordPoll(ctx context.Context, p kanban.PullRequest, events []kanban.PREvent) ([]kanban.PREvent, error)
	AddPREvents(ctx context.Context, prID string, events []kanban.PREvent, pollNow bool) ([]kanban.PREvent, error)
	WatchedPullRequests(ctx context.Context, f kanban.ForgeKind, forgeRepo string, numbers []int, headSHA string) ([]kanban.PullRequest, error)
	GetPullRequest(ctx context.Context, id string) (*kanban.PullRequest, error)
	PRAutomation(ctx context.Context, taskID string, f kanban.ForgeKind) (*kanban.PRAutomation, error)
	ClaimPREvents(ctx context.Context, backend string, now time.Time, limit int) ([]kanban.PREvent, error)
	FinishPREvent(ctx context.Context, id, backend string, o store.PREventOutcome) error
	ReleasePREvents(ctx context.Context, backend string, ids []string) error
	InterruptPREvents(ctx context.Context, backend string, since time.Time) (int, error)
}

var _ Store = (*store.Store)(nil)

// Forges gives the forge client of a pull request (its repository's
// account). The same client should come back for the same account: its
// conditional-request cache and rate limits are per client.
type Forges interface {
	Forge(ctx context.Context, pr kanban.PullRequest) (forge.Forge, error)
}

// ForgesFunc adapts a function to Forges.
type ForgesFunc func(ctx context.Context, pr kanban.PullRequest) (forge.Forge, error)

// Forge calls f.
func (f ForgesFunc) Forge(ctx context.Context, pr kanban.PullRequest) (forge.Forge, error) {
	return f(ctx, pr)
}

// Config configures a Watcher.
type Config struct {
	Store  Store
	Forges Forges
	Sink   Sink
	// Events gets kanban.PullRequestPolled when a poll recorded a change
	// of what a pull request shows (a bus of its own, unheard, when nil).
	Events *kanban.DomainEvents
	// Backend is this backend's id: the journal entries it claims carry
	// it (cluster leases tell which backends are alive).
	Backend string
	Log     *slog.Logger
	// Interval is each pull request's poll interval (DefaultInterval).
	Interval time.Duration
	// Concurrency bounds the pull requests polled at once, and the pull
	// requests whose events are delivered at once (DefaultConcurrency).
	Concurrency int
	// Lease is how long a claimed pull request stays claimed when its
	// poll is not recorded (a backend died): DefaultLease.
	Lease time.Duration
	// Backoff spaces polls after failures (forge.Backoff's defaults) and
	// deliveries after a Sink error.
	Backoff forge.Backoff
	// MergeMethod is how auto-merge merges (forge.MergeCommit when empty).
	MergeMethod forge.MergeMethod
	// MaxAttempts bounds deliveries of one event (DefaultMaxAttempts).
	MaxAttempts int
	// BackendTTL is how long a backend's lease lasts without renewal
	// (cluster's TTL): entries claimed by a backend silent for longer are
	// interrupted.
	BackendTTL time.Duration
	// Clock is the time (time.Now).
	Clock func() time.Time
}

// Watcher watches the open pull requests of tasks. Run runs it; the
// webhook handler (Webhook) feeds it.
type Watcher struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}
	// slots bounds the polls and deliveries in flight, and the webhook
	// deliveries being read.
	polls, deliveries, webhookReads chan struct{}
	running                         sync.WaitGroup

	mu     sync.Mutex
	paused map[any]time.Time // a forge client → no call before
	// interrupted is when orphaned events were last looked for (by Run's
	// goroutine only).
	interrupted time.Time
}

// New returns a watcher; Run starts it.
func New(cfg Config) (*Watcher, error) {
	if cfg.Store == nil || cfg.Forges == nil || cfg.Sink == nil {
		return nil, errors.New("prwatch: Store, Forges and Sink are required")
	}
	if cfg.Backend == "" {
		return nil, errors.New("prwatch: Backend (this backend's id) is required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.BackendTTL <= 0 {
		cfg.BackendTTL = DefaultBackendTTL
	}
	if cfg.MergeMethod == "" {
		cfg.MergeMethod = forge.MergeCommit
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Events == nil {
		cfg.Events = &kanban.DomainEvents{} // no reaction: nobody listens
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{cfg: cfg, log: log, wake: make(chan struct{}, 1), polls: make(chan struct{}, cfg.Concurrency),
		deliveries: make(chan struct{}, cfg.Concurrency), webhookReads: make(chan struct{}, maxWebhookReads), paused: map[any]time.Time{}}, nil
}

// Wake makes the watcher look for due pull requests and events now (a
// pull request was linked, or its switches changed).
func (w *Watcher) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run watches until ctx ends, then waits for the polls and deliveries in
// flight (each ends with ctx). Entries a dead backend left being acted on
// are interrupted first.
func (w *Watcher) Run(ctx context.Context) {
	defer w.running.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		if now := w.cfg.Clock(); now.Sub(w.interrupted) >= w.cfg.BackendTTL {
			w.interrupted = now
			w.interrupt(ctx)
		}
		w.deliver(ctx)
		w.poll(ctx)
		timer.Reset(w.untilDue(ctx))
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-timer.C:
		}
	}
}

// step runs one round and waits for it: the polls it started and the
// deliveries of what they recorded (for tests and benchmarks).
func (w *Watcher) step(ctx context.Context) {
	w.interrupt(ctx)
	w.poll(ctx)
	w.running.Wait()
	w.deliver(ctx)
	w.running.Wait()
}

// untilDue is how long to wait for the next due pull request.
func (w *Watcher) untilDue(ctx context.Context) time.Duration {
	due, err := w.cfg.Store.NextPollDue(ctx)
	if err != nil || due == nil {
		return idle
	}
	return min(max(due.Sub(w.cfg.Clock()), 0), idle)
}

// interrupt marks the entries a dead backend was acting on.
func (w *Watcher) interrupt(ctx context.Context) {
	n, err := w.cfg.Store.InterruptPREvents(ctx, w.cfg.Backend, w.cfg.Clock().Add(-w.cfg.BackendTTL))
	if err != nil && ctx.Err() == nil {
		w.log.Warn("prwatch: interrupt orphaned events", "err", err)
	}
	if n > 0 {
		w.log.Warn("prwatch: events interrupted: a backend stopped while acting on them (they are not acted on again)", "count", n)
	}
}

// pause keeps f from being called before until (a rate limit).
func (w *Watcher) pause(f forge.Forge, until time.Time) {
	if f == nil || !reflect.TypeOf(f).Comparable() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if until.After(w.paused[f]) {
		w.paused[f] = until
	}
}

// pausedUntil returns when f may be called again (zero: now).
func (w *Watcher) pausedUntil(f forge.Forge) time.Time {
	if f == nil || !reflect.TypeOf(f).Comparable() {
		return time.Time{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.paused[f]
}

// acquire takes a slot of sem, or gives up when ctx ends.
func acquire(ctx context.Context, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// PollDue polls due pull requests, Concurrency at a time, until limit
// were polled or none is due, and waits for the polls (their events are
// recorded, not delivered). It returns how many it polled. It is for
// tools and benchmarks that drive the watcher without Run; it must not
// run beside Run on the same watcher.
func (w *Watcher) PollDue(ctx context.Context, limit int) int {
	n := 0
	for n < limit && ctx.Err() == nil {
		due, err := w.cfg.Store.ClaimDuePullRequests(ctx, w.cfg.Clock(), w.cfg.Lease, min(w.cfg.Concurrency, limit-n))
		if err != nil || len(due) == 0 {
			break
		}
		for _, p := range due {
			if !acquire(ctx, w.polls) {
				break
			}
			w.running.Add(1)
			go func() {
				defer w.running.Done()
				defer func() { <-w.polls }()
				w.pollOne(ctx, p)
			}()
		}
		n += len(due)
	}
	w.running.Wait()
	return n
}
