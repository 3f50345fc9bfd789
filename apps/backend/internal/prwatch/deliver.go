package prwatch

import (
	"context"
	"errors"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// finishTimeout bounds recording how an attempt ended once ctx has
// ended (a shutdown during a delivery): an attempt left unrecorded would
// be interrupted by the next start, never retried.
const finishTimeout = 5 * time.Second

// deliver claims the pending events of as many pull requests as there
// are free delivery slots and acts on each pull request's events, in
// order, in its own goroutine.
func (w *Watcher) deliver(ctx context.Context) {
	free := cap(w.deliveries) - len(w.deliveries) // only this goroutine takes slots
	if free == 0 || ctx.Err() != nil {
		return
	}
	evs, err := w.cfg.Store.ClaimPREvents(ctx, w.cfg.Backend, w.cfg.Clock(), free)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("prwatch: claim events", "err", err)
		}
		return
	}
	for len(evs) > 0 {
		n := 1
		for n < len(evs) && evs[n].PullRequestID == evs[0].PullRequestID {
			n++
		}
		group := evs[:n]
		evs = evs[n:]
		if !acquire(ctx, w.deliveries) {
			w.release(ctx, append(group, evs...))
			return
		}
		w.running.Add(1)
		go func() {
			defer w.running.Done()
			defer func() { <-w.deliveries; w.Wake() }()
			w.deliverPR(ctx, group)
		}()
	}
}

// deliverPR acts on one pull request's claimed events in order; after an
// attempt to be retried, the rest wait for it (released unattempted).
func (w *Watcher) deliverPR(ctx context.Context, evs []kanban.PREvent) {
	for i, e := range evs {
		if ctx.Err() != nil {
			w.release(ctx, evs[i:])
			return
		}
		o := w.act(ctx, e)
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		err := w.cfg.Store.FinishPREvent(fctx, e.ID, w.cfg.Backend, o)
		cancel()
		if err != nil {
			w.log.Error("prwatch: record an event's delivery", "event", e.ID, "err", err)
		}
		if o.State == kanban.EventPending {
			w.release(ctx, evs[i+1:])
			return
		}
	}
}

// act delivers one event (or makes the merge it is) and says how it went.
func (w *Watcher) act(ctx context.Context, e kanban.PREvent) store.PREventOutcome {
	pr, err := w.cfg.Store.GetPullRequest(ctx, e.PullRequestID)
	if err != nil {
		return w.retry(e, err, "the pull request could not be read")
	}
	ev, pl, err := eventOf(e, *pr)
	if err != nil {
		return store.PREventOutcome{State: kanban.EventFailed, Error: "the event's record could not be read"}
	}
	if ev.Kind == kindMerge {
		return w.merge(ctx, *pr, pl.Merge, e)
	}
	if err := w.cfg.Sink.Deliver(ctx, ev); err != nil {
		w.log.Warn("prwatch: deliver event", "event", e.ID, "kind", e.Kind, "attempt", e.Attempts, "err", err)
		return w.retry(e, err, "the "+e.Kind+" event could not be delivered")
	}
	return store.PREventOutcome{State: kanban.EventDelivered}
}

// retry is a failed attempt's outcome: again after the backoff, or
// failed after MaxAttempts.
func (w *Watcher) retry(e kanban.PREvent, err error, generic string) store.PREventOutcome {
	text := safeError(err, generic)
	if e.Attempts >= w.cfg.MaxAttempts {
		return store.PREventOutcome{State: kanban.EventFailed, Error: text}
	}
	return store.PREventOutcome{State: kanban.EventPending, Error: text,
		RetryAt: w.cfg.Clock().Add(w.cfg.Backoff.Next(e.Attempts, err))}
}

// merge makes the merge the automation decided, of the head it checked
// (the forge refuses it if the head moved); the pull request is polled
// again at once to see the outcome.
func (w *Watcher) merge(ctx context.Context, pr kanban.PullRequest, plan *mergePlan, e kanban.PREvent) store.PREventOutcome {
	refuse := func(why string) store.PREventOutcome {
		return store.PREventOutcome{State: kanban.EventFailed, Error: "auto-merge: " + why, PollNow: true}
	}
	switch {
	case plan == nil:
		return refuse("the merge's record could not be read")
	case !pr.Options.AutoMergeEnabled:
		return refuse("auto-merge was turned off before the merge")
	case pr.State != kanban.PROpen:
		return refuse("the pull request is no longer open")
	}
	f, err := w.cfg.Forges.Forge(ctx, pr)
	if err == nil && f == nil {
		err = kanban.Errorf(kanban.CodeUnavailable, "no forge is configured for this repository")
	}
	if err != nil {
		o := w.retry(e, err, "the forge is not available")
		o.Error = "auto-merge: " + o.Error
		return o
	}
	repo, err := forgeRepo(pr)
	if err != nil {
		return refuse(safeError(err, "the repository has no forge name"))
	}
	_, err = f.Merge(ctx, repo, pr.Number, forge.MergeRequest{Method: plan.Method, ExpectedHeadSHA: plan.SHA})
	if err == nil {
		w.log.Info("prwatch: auto-merged", "pr", pr.ID, "number", pr.Number, "sha", plan.SHA, "method", plan.Method)
		return store.PREventOutcome{State: kanban.EventDelivered, PollNow: true}
	}
	var fe *forge.Error
	if errors.As(err, &fe) {
		w.log.Warn("prwatch: auto-merge refused", "pr", pr.ID, "err", err, "detail", fe.Detail())
		if fe.RetryAfter > 0 {
			w.pause(f, w.cfg.Clock().Add(fe.RetryAfter))
		}
	}
	if kanban.ErrorCode(err) == kanban.CodeUnavailable {
		o := w.retry(e, err, "the forge is not available")
		o.Error = "auto-merge: " + o.Error
		return o
	}
	return refuse(safeError(err, "the forge refused the merge"))
}

// release gives claimed events back, unattempted.
func (w *Watcher) release(ctx context.Context, evs []kanban.PREvent) {
	if len(evs) == 0 {
		return
	}
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := w.cfg.Store.ReleasePREvents(rctx, w.cfg.Backend, ids); err != nil {
		w.log.Error("prwatch: release events", "count", len(ids), "err", err)
	}
}
