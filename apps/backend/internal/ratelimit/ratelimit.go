// Package ratelimit owns the token buckets that bound how fast one caller
// (an operator token, an agent session) may call actions and write: a
// bucket per caller and kind, refilled continuously at a rate up to a
// burst, kept in this process's memory. Each backend enforces the
// configured limits on the calls it serves (a per-backend limit, not a
// share of a cluster-wide one: agent sessions and WebSocket connections
// stay on one backend, so dividing would cut their rate).
//
// It imports only the standard library.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Defaults: generous for a person or an agent, low enough that a loop
// cannot flood the backend.
const (
	DefaultCallRate   = 50  // calls per second, per caller
	DefaultCallBurst  = 200 // calls at once
	DefaultWriteRate  = 20  // writes per second, per caller
	DefaultWriteBurst = 100 // writes at once
	// idle is how long an untouched bucket is kept: a full bucket is
	// the same as a missing one, so forgetting it changes nothing.
	idle = 10 * time.Minute
	// maxCallers bounds the buckets held; beyond it the idle ones go.
	maxCallers = 100_000
)

// Limit is one bucket's refill rate (per second) and burst. A Rate of 0
// is no limit.
type Limit struct {
	Rate  float64
	Burst int
}

// Config holds the limits: every action call counts against Calls, a
// write also against Writes.
type Config struct {
	Calls, Writes Limit
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Default is the default configuration.
func Default() Config {
	return Config{Calls: Limit{DefaultCallRate, DefaultCallBurst}, Writes: Limit{DefaultWriteRate, DefaultWriteBurst}}
}

// bucket is a token bucket: tokens at the moment at.
type bucket struct {
	tokens float64
	at     time.Time
}

// caller is one caller's buckets.
type caller struct {
	calls, writes bucket
	used          time.Time
}

// Limiter holds every caller's buckets.
type Limiter struct {
	cfg     Config
	mu      sync.Mutex
	callers map[string]*caller
	swept   time.Time
}

// New returns a limiter for cfg.
func New(cfg Config) *Limiter {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Limiter{cfg: cfg, callers: map[string]*caller{}}
}

// Off reports whether l limits nothing.
func (l *Limiter) Off() bool { return l == nil || (l.cfg.Calls.Rate <= 0 && l.cfg.Writes.Rate <= 0) }

// Take spends one call (and, with write, one write) of key's buckets.
// When a bucket it needs is empty it spends nothing and returns how long
// until it holds a token again, and the kind that ran out ("calls",
// "writes").
func (l *Limiter) Take(key string, write bool) (wait time.Duration, kind string, ok bool) {
	if l.Off() {
		return 0, "", true
	}
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.caller(key, now)
	if w := need(&c.calls, l.cfg.Calls, now); w > 0 {
		return w, "calls", false
	}
	if write {
		if w := need(&c.writes, l.cfg.Writes, now); w > 0 {
			return w, "writes", false
		}
		spend(&c.writes, l.cfg.Writes)
	}
	spend(&c.calls, l.cfg.Calls)
	return 0, "", true
}

// Peek reports, without spending, how long until key may make a call
// (0: now).
func (l *Limiter) Peek(key string) time.Duration {
	if l.Off() {
		return 0
	}
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	return need(&l.caller(key, now).calls, l.cfg.Calls, now)
}

// caller returns key's buckets (full for a new caller), sweeping idle
// callers now and then.
func (l *Limiter) caller(key string, now time.Time) *caller {
	c, ok := l.callers[key]
	if !ok {
		if len(l.callers) >= maxCallers || now.Sub(l.swept) > idle {
			l.sweep(now)
		}
		c = &caller{calls: bucket{float64(l.cfg.Calls.Burst), now}, writes: bucket{float64(l.cfg.Writes.Burst), now}}
		l.callers[key] = c
	}
	c.used = now
	return c
}

func (l *Limiter) sweep(now time.Time) {
	l.swept = now
	for k, c := range l.callers {
		if now.Sub(c.used) > idle {
			delete(l.callers, k)
		}
	}
}

// need refills b to now and returns 0 when it holds a token, else how
// long until it does.
func need(b *bucket, lim Limit, now time.Time) time.Duration {
	if lim.Rate <= 0 {
		return 0
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = math.Min(float64(max(lim.Burst, 1)), b.tokens+d.Seconds()*lim.Rate)
		b.at = now
	}
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) / lim.Rate * float64(time.Second))
}

func spend(b *bucket, lim Limit) {
	if lim.Rate > 0 {
		b.tokens--
	}
}
