package app

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// shutdownWait bounds how long the parts of a stopping backend take to
// stop once its base context ended.
const shutdownWait = 10 * time.Second

// lifetime is a backend's base context and its cleanup stack. Every part
// is built and started under ctx and pushes how it stops; close ends ctx
// (so every call in flight is cancelled: requests, automations, agents)
// and then stops the parts in the reverse order of their pushes, all
// within one shutdown bound. A start that fails half-way closes what it
// built the same way.
type lifetime struct {
	ctx    context.Context
	cancel context.CancelFunc
	stops  []stopper
}

// stopper is how one part stops: within ctx's bound, with a context that
// is not cancelled (the writes that record how it stopped must finish).
type stopper struct {
	name string
	stop func(ctx context.Context) error
}

// newLifetime returns the lifetime of a backend that runs until parent ends
// or close is called.
func newLifetime(parent context.Context) *lifetime {
	ctx, cancel := context.WithCancel(parent)
	return &lifetime{ctx: ctx, cancel: cancel}
}

// push adds a part's stop to the stack.
func (l *lifetime) push(name string, stop func(ctx context.Context) error) {
	l.stops = append(l.stops, stopper{name: name, stop: stop})
}

// close cancels the base context and stops every part pushed, the last
// first, within wait; it returns the errors of the parts that failed to
// stop.
func (l *lifetime) close(wait time.Duration) error {
	l.cancel()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), wait)
	defer cancel()
	var errs []error
	for i := len(l.stops) - 1; i >= 0; i-- {
		if err := l.stops[i].stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", l.stops[i].name, err))
		}
	}
	l.stops = nil
	return errors.Join(errs...)
}
