package forge

import (
	"context"
	"maps"
	"sync"
)

// MaxValidators bounds the ETags one Validators records (a pull request's
// poll reads five to a few dozen URLs).
const MaxValidators = 64

// Validators carry the ETags of a caller's conditional reads from one
// process to the next (or to another backend): the PR watcher keeps them
// with each watched pull request, so the first poll after a restart, or
// on a backend that never read that pull request, is answered 304 too.
//
// A read given through WithValidators is conditional on the caller's
// ETag only (none: a full read), not on what this client read last: a
// 304 means "unchanged since the read the caller recorded", so a result
// the caller dropped (a poll that failed half-way, or lost a race) is
// read again in full. A 304 to an ETag whose body this client does not
// hold reports NotModified with an empty value: the caller keeps what it
// derived from its last read. A method that reads several URLs and finds
// only some of them unchanged reads those again without the caller's
// ETags (its result must be whole). Seen returns what to keep for next
// time.
type Validators struct {
	mu   sync.Mutex
	in   map[string]string
	seen map[string]string
}

// NewValidators returns validators holding known (URL path and query →
// ETag), as Seen returned them last time; nil for none.
func NewValidators(known map[string]string) *Validators {
	return &Validators{in: maps.Clone(known), seen: map[string]string{}}
}

// Seen returns the ETags of the reads made with v (at most
// MaxValidators): the ones to keep. A URL not read this time is dropped.
func (v *Validators) Seen() map[string]string {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.seen)
}

func (v *Validators) known(key string) string {
	if v == nil {
		return ""
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.in[key]
}

func (v *Validators) record(key, etag string) {
	if v == nil || etag == "" || len(etag) > 256 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.seen[key]; ok || len(v.seen) < MaxValidators {
		v.seen[key] = etag
	}
}

type validatorsKey struct{}

// WithValidators makes the forge reads made with ctx conditional on v's
// ETags, and records theirs in v.
func WithValidators(ctx context.Context, v *Validators) context.Context {
	return context.WithValue(ctx, validatorsKey{}, v)
}

// validatorsOf returns ctx's validators (nil when none), and whether
// their ETags are sent: not when a method reads again without them
// (withoutSeeds).
func validatorsOf(ctx context.Context) (v *Validators, seed bool) {
	v, _ = ctx.Value(validatorsKey{}).(*Validators)
	_, off := ctx.Value(noSeedsKey{}).(bool)
	return v, v != nil && !off
}

type noSeedsKey struct{}

// withoutSeeds makes reads with ctx send no caller ETag (each still
// records what it got in the caller's Validators).
func withoutSeeds(ctx context.Context) context.Context {
	return context.WithValue(ctx, noSeedsKey{}, true)
}
