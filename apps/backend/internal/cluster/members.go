package cluster

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// Membership defaults: a backend renews its lease every Beat; a lease not
// renewed for TTL has lapsed, and the backend's sessions are taken over.
const (
	DefaultBeat = 3 * time.Second
	DefaultTTL  = 15 * time.Second
)

// Members keeps this backend's lease and takes over orphaned sessions.
type Members struct {
	st   *store.Store
	id   string
	url  string
	beat time.Duration
	ttl  time.Duration
	log  *slog.Logger
	// takeOver, when set, claims and resumes orphaned sessions (the
	// runtime's Resume); it runs after every renewal. It and url are set
	// by Start.
	takeOver func(context.Context) error
	// renewed is when the lease was last renewed (Unix nanoseconds);
	// failures counts renewals that failed.
	renewed  atomic.Int64
	failures atomic.Uint64
}

// MembersConfig configures Members.
type MembersConfig struct {
	Store *store.Store
	ID    string // this backend
	Beat  time.Duration
	TTL   time.Duration
	Log   *slog.Logger
}

// NewMembers returns the membership of a backend; Start begins its lease.
func NewMembers(c MembersConfig) *Members {
	if c.Beat <= 0 {
		c.Beat = DefaultBeat
	}
	if c.TTL <= 0 {
		c.TTL = DefaultTTL
	}
	return &Members{st: c.Store, id: c.ID, beat: c.Beat, ttl: c.TTL, log: c.Log}
}

// Start begins the lease of the backend serving at url (an error means
// the database is unreachable), before Run. takeOver takes over what
// backends that are gone left: it claims and resumes orphaned sessions
// (when this backend runs agents) and releases their sessions' MCP
// attachments (nil: nothing); it runs after every renewal.
func (m *Members) Start(ctx context.Context, url string, takeOver func(context.Context) error) error {
	m.url, m.takeOver = url, takeOver
	return m.renew(ctx)
}

// renew renews the lease, keeping when it did and counting failures.
func (m *Members) renew(ctx context.Context) error {
	now := time.Now()
	if err := m.st.Heartbeat(ctx, m.id, m.url, now); err != nil {
		if ctx.Err() == nil {
			m.failures.Add(1)
		}
		return err
	}
	m.renewed.Store(now.UnixNano())
	return nil
}

// LeaseAge is how long ago this backend last renewed its lease: past
// TTL the others consider it gone and take over its sessions. ok is
// false until the first renewal succeeded: there is no age to report.
func (m *Members) LeaseAge() (age time.Duration, ok bool) {
	at := m.renewed.Load()
	if at == 0 {
		return 0, false
	}
	return time.Since(time.Unix(0, at)), true
}

// TTL is how long a lease lasts unrenewed.
func (m *Members) TTL() time.Duration { return m.ttl }

// RenewalFailures is how many renewals of the lease failed.
func (m *Members) RenewalFailures() uint64 { return m.failures.Load() }

// Run renews the lease every beat and takes over orphaned sessions until
// ctx ends. A session whose backend died is taken over within TTL plus
// one beat of the backend's last renewal.
func (m *Members) Run(ctx context.Context) {
	t := time.NewTicker(m.beat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := m.renew(ctx); err != nil {
			m.log.Warn("cluster: renew lease", "err", err)
			continue
		}
		if m.takeOver != nil {
			if err := m.takeOver(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("cluster: take over orphaned sessions", "err", err)
			}
		}
		if err := m.st.PruneBackends(ctx, time.Now().Add(-10*m.ttl)); err != nil && ctx.Err() == nil {
			m.log.Warn("cluster: prune leases", "err", err)
		}
	}
}

// Stop ends the lease at once, so that the others take over this
// backend's sessions (after its agents stopped) without waiting for it
// to lapse.
func (m *Members) Stop(ctx context.Context) error { return m.st.Deregister(ctx, m.id) }

// Once runs fn unless another backend is running the work called name
// right now (an advisory lock held while fn runs). It reports whether fn
// ran.
func Once(ctx context.Context, st *store.Store, name string, fn func()) (bool, error) {
	unlock, ok, err := st.TryLock(ctx, name)
	if err != nil || !ok {
		return false, err
	}
	defer unlock()
	fn()
	return true, nil
}
