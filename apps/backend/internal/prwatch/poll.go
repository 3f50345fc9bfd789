package prwatch

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// poll claims as many due pull requests as there are free poll slots and
// polls each in its own goroutine.
func (w *Watcher) poll(ctx context.Context) {
	free := cap(w.polls) - len(w.polls) // only this goroutine takes slots
	if free == 0 || ctx.Err() != nil {
		return
	}
	due, err := w.cfg.Store.ClaimDuePullRequests(ctx, w.cfg.Clock(), w.cfg.Lease, free)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("prwatch: claim due pull requests", "err", err)
		}
		return
	}
	for _, p := range due {
		if !acquire(ctx, w.polls) {
			return // the claims' leases run out; whoever runs next polls them
		}
		w.running.Add(1)
		go func() {
			defer w.running.Done()
			defer func() { <-w.polls; w.Wake() }()
			w.pollOne(ctx, p)
		}()
	}
}

// pollOne polls one claimed pull request and records the result.
func (w *Watcher) pollOne(ctx context.Context, p kanban.PullRequest) {
	now := w.cfg.Clock()
	f, err := w.cfg.Forges.Forge(ctx, p)
	if err == nil && f == nil {
		err = kanban.Errorf(kanban.CodeUnavailable, "no forge is configured for this repository")
	}
	if err != nil {
		w.failed(ctx, p, nil, err)
		return
	}
	if until := w.pausedUntil(f); until.After(now) {
		p.Watch.NextPollAt = until // the forge's rate limit: not a failure of this pull request
		w.record(ctx, p, nil)
		return
	}
	repo, err := forgeRepo(p)
	if err != nil {
		w.failed(ctx, p, f, err)
		return
	}
	pctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	vals := forge.NewValidators(p.Watch.Validators)
	o, err := read(forge.WithValidators(pctx, vals), f, repo, p)
	if err != nil {
		w.failed(ctx, p, f, err)
		return
	}
	var s settings
	if changed(o) {
		a, err := w.cfg.Store.PRAutomation(ctx, p.TaskID, p.Forge)
		if err != nil {
			w.log.Error("prwatch: read the task's automation settings", "pr", p.ID, "err", err)
			return // the claim's lease runs out and the poll is made again
		}
		s = settings{override: a.AutoFixPromptOverride, reviewer: a.ReviewReviewerLogin}
	}
	next, events := decide(p, o, s, w.cfg.MergeMethod, now)
	next.Watch.Validators = vals.Seen()
	next.Watch.NextPollAt = now.Add(jitter(w.cfg.Interval))
	if w.record(ctx, next, events) && shows(p) != shows(next) {
		w.cfg.Events.Emit(kanban.PullRequestPolled{TaskID: p.TaskID, PullRequestID: p.ID})
	}
}

// shown is what a pull request shows on the board.
type shown struct {
	state            kanban.PRState
	head, title      string
	checks           kanban.ChecksState
	review           kanban.ReviewState
	known, mergeable bool
}

func shows(p kanban.PullRequest) shown {
	s := shown{state: p.State, head: p.HeadSHA, title: p.Title, checks: p.Checks, review: p.Review}
	if p.Mergeable != nil {
		s.known, s.mergeable = true, *p.Mergeable
	}
	return s
}

// record writes a poll's result; a stale one (the row was written since
// the claim: a webhook, a delivery, an operator) is dropped, and the pull
// request made due at once to be polled again. It reports whether the
// result was written.
func (w *Watcher) record(ctx context.Context, p kanban.PullRequest, events []kanban.PREvent) bool {
	recorded, err := w.cfg.Store.RecordPoll(ctx, p, events)
	switch {
	case errors.Is(err, store.ErrStale):
		w.log.Debug("prwatch: poll result stale, dropped; polling again", "pr", p.ID)
		if _, err := w.cfg.Store.AddPREvents(ctx, p.ID, nil, true); err != nil && ctx.Err() == nil {
			w.log.Error("prwatch: make a pull request due again", "pr", p.ID, "err", err)
		}
		w.Wake()
		return false
	case err != nil:
		if ctx.Err() == nil {
			w.log.Error("prwatch: record poll", "pr", p.ID, "err", err)
		}
		return false
	case len(recorded) > 0:
		w.Wake()
	}
	return true
}

// failed records a failed poll: the pull request is polled again after
// the backoff, never before a rate limit's end (which pauses every poll
// on that forge client).
func (w *Watcher) failed(ctx context.Context, p kanban.PullRequest, f forge.Forge, err error) {
	now := w.cfg.Clock()
	p.Watch.Failures++
	delay := w.cfg.Backoff.Next(p.Watch.Failures, err)
	var fe *forge.Error
	if errors.As(err, &fe) {
		if fe.RetryAfter > 0 && f != nil {
			w.pause(f, now.Add(fe.RetryAfter))
		}
		w.log.Warn("prwatch: poll failed", "pr", p.ID, "failures", p.Watch.Failures, "retry_in", delay, "err", err, "detail", fe.Detail())
	} else {
		w.log.Warn("prwatch: poll failed", "pr", p.ID, "failures", p.Watch.Failures, "retry_in", delay, "err", err)
	}
	p.Watch.NextPollAt = now.Add(delay)
	p.Automation.LastError = safeError(err, "the pull request could not be polled")
	w.record(ctx, p, nil)
}

// safeError is err's text when it is a kanban error (safe to show), else
// generic.
func safeError(err error, generic string) string {
	if e, ok := kanban.AsError(err); ok {
		return e.Message
	}
	return generic
}

// read makes a poll's forge reads: the pull request, and while it is
// open its reviews, the review comments since the last poll, its head's
// checks and, for failing checks not reported yet, the first failing
// check's log.
func read(ctx context.Context, f forge.Forge, repo forge.Repo, p kanban.PullRequest) (observation, error) {
	var o observation
	var err error
	if o.pr, err = f.PR(ctx, repo, p.Number); err != nil {
		return o, err
	}
	head := p.HeadSHA
	if !o.pr.NotModified {
		if o.pr.State == forge.PRMerged || o.pr.State == forge.PRClosed {
			return o, nil
		}
		head = o.pr.HeadSHA
	}
	if o.reviews, err = f.Reviews(ctx, repo, p.Number, time.Time{}); err != nil {
		return o, err
	}
	if o.comments, err = f.ReviewComments(ctx, repo, p.Number, p.Watch.CommentsSince); err != nil {
		return o, err
	}
	if head == "" {
		return o, nil
	}
	if o.checks, err = f.Checks(ctx, repo, head); err != nil {
		return o, err
	}
	if fc, ok := newFailure(p, o.checks); ok && fc.HasLog && fc.ID > 0 {
		log, err := f.CheckLog(ctx, repo, fc.ID)
		switch {
		case err == nil:
			o.log = log
		case ctx.Err() != nil:
			return o, err
		}
		// Without its log the check's own summary is the excerpt.
	}
	return o, nil
}

// changed reports whether any read of o came back changed.
func changed(o observation) bool {
	return o.pr != nil && !o.pr.NotModified || o.reviews != nil && !o.reviews.NotModified ||
		o.comments != nil && !o.comments.NotModified || o.checks != nil && !o.checks.NotModified
}

// forgeRepo is the forge's name of p's repository: owner and name (a
// GitLab project's namespace and name).
func forgeRepo(p kanban.PullRequest) (forge.Repo, error) {
	i := strings.LastIndexByte(p.ForgeRepo, '/')
	if i <= 0 || i == len(p.ForgeRepo)-1 {
		return forge.Repo{}, kanban.FieldError("forge_repo", "must be the forge's owner/name of the repository")
	}
	return forge.Repo{Owner: p.ForgeRepo[:i], Name: p.ForgeRepo[i+1:]}, nil
}

// jitter spreads polls: d give or take a tenth.
func jitter(d time.Duration) time.Duration {
	if d < 10 {
		return d
	}
	return d - d/10 + rand.N(d/5+1) // #nosec G404 -- spreading, not security
}
