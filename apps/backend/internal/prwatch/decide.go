package prwatch

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// observation is what one poll read of a pull request. A NotModified
// read (or a nil one: not read) leaves what the record holds.
type observation struct {
	pr       *forge.PR
	reviews  *forge.Reviews
	comments *forge.ReviewComments
	checks   *forge.Checks
	log      *forge.Log // of the first failing check, when fetched
}

// settings are the task-wide automation settings a decision reads.
type settings struct {
	override *string // the auto-fix prompt override
	reviewer string  // the login whose review requests count ("": any)
}

// reserve is the room in a poll's journal entries kept for what is not a
// review or a comment: review requests, checks, a merge, the lifecycle.
const reserve = kanban.MaxRequestedReviewers + 4

// maxFailingNames bounds the other failing checks an event names.
const maxFailingNames = 20

// decider turns what a poll observed into the record to write and the
// journal entries to append with it (decide).
type decider struct {
	pr     kanban.PullRequest
	events []kanban.PREvent
	method forge.MergeMethod
	now    time.Time
}

// decide is deterministic: the same record and observation give the same
// entries under the same keys, and the record moves past what it reports,
// so what was seen once is never reported again (and the keys, unique
// per pull request, hold that against webhooks and other backends).
func decide(p kanban.PullRequest, o observation, s settings, method forge.MergeMethod, now time.Time) (kanban.PullRequest, []kanban.PREvent) {
	d := &decider{pr: p, method: method, now: now}
	was := p.State
	d.state(o.pr)
	if was.Watched() {
		d.reviewers(o.pr, s)
		d.checks(o.checks, o.log, s)
		d.reviews(o.reviews)
		d.comments(o.comments)
		d.merge()
		d.lifecycle(was)
	}
	if p.Watch.Failures > 0 {
		d.pr.Automation.LastError = "" // the poll failures it told of are over
	}
	d.pr.Watch.Failures, d.pr.Watch.LastPolledAt = 0, &now
	return d.pr, d.events
}

func (d *decider) add(kind Kind, key string, p payload) {
	d.events = append(d.events, entry(kind, key, p))
}

// room is how many reviews and comments one poll may still report.
func (d *decider) room() int { return kanban.MaxPREventsPerPoll - reserve - len(d.events) }

// state takes the forge's state of the pull request.
func (d *decider) state(pr *forge.PR) {
	if pr == nil || pr.NotModified {
		return
	}
	p := &d.pr
	p.URL, p.Title, p.Mergeable = kanban.Clip(pr.URL, kanban.MaxURLLen), kanban.Clip(oneLine(pr.Title), kanban.MaxPRTitleLen), pr.Mergeable
	p.HeadSHA = pr.HeadSHA
	switch pr.State {
	case forge.PRDraft:
		p.State = kanban.PRDraft
	case forge.PRMerged:
		p.State = kanban.PRMerged
	case forge.PRClosed:
		p.State = kanban.PRClosed
	default:
		p.State = kanban.PROpen
	}
}

// reviewers reports each reviewer newly requested (only s.reviewer's
// requests when set). The first observation only sets the baseline.
func (d *decider) reviewers(pr *forge.PR, s settings) {
	if pr == nil || pr.NotModified {
		return
	}
	cur := []string{}
	for _, l := range pr.RequestedReviewers {
		if l = oneLine(l); l != "" && len(l) <= kanban.MaxReviewerLoginLen && len(cur) < kanban.MaxRequestedReviewers && !slices.Contains(cur, l) {
			cur = append(cur, l)
		}
	}
	w := &d.pr.Watch
	if w.RequestedReviewers != nil {
		for _, l := range cur {
			if slices.Contains(w.RequestedReviewers, l) || s.reviewer != "" && !strings.EqualFold(l, s.reviewer) {
				continue
			}
			w.ReviewRequests++
			p := payload{HeadSHA: d.pr.HeadSHA, Reviewer: l}
			if d.pr.Options.PromptOnReviewRequested {
				p.Prompt = lifecyclePrompt(ReasonReviewRequested, d.pr)
			}
			d.add(ReviewRequested, "review_requested:"+strconv.Itoa(w.ReviewRequests), p)
		}
	}
	w.RequestedReviewers = cur
	if d.pr.Review == kanban.ReviewNone || d.pr.Review == kanban.ReviewPending {
		d.pr.Review = waiting(cur)
	}
}

func waiting(requested []string) kanban.ReviewState {
	if len(requested) > 0 {
		return kanban.ReviewPending
	}
	return kanban.ReviewNone
}

// reviews reports the reviews submitted since the newest one seen, and
// takes the combined verdict: each reviewer's latest verdict counts
// (a dismissal withdraws it), changes requested winning over approvals.
func (d *decider) reviews(rv *forge.Reviews) {
	if rv == nil || rv.NotModified {
		return
	}
	w := &d.pr.Watch
	verdict := map[string]forge.ReviewState{}
	for _, r := range rv.Items {
		switch r.State {
		case forge.ReviewApproved, forge.ReviewChangesRequested:
			verdict[r.Author] = r.State
		case forge.ReviewDismissed:
			delete(verdict, r.Author)
		}
		if r.ID <= w.LastReviewID || r.State == forge.ReviewPending || d.room() <= 0 {
			continue
		}
		r := r
		d.add(ReviewSubmitted, "review:"+strconv.FormatInt(r.ID, 10), payload{HeadSHA: d.pr.HeadSHA, Review: &r})
		w.LastReviewID = r.ID
	}
	d.pr.Review = waiting(w.RequestedReviewers)
	for _, v := range verdict {
		if v == forge.ReviewChangesRequested {
			d.pr.Review = kanban.ReviewChangesRequested
			return
		}
		d.pr.Review = kanban.ReviewApproved
	}
}

// comments reports the review comments newer than the newest one seen.
// Comments come oldest update first; when a poll has no room for all,
// the rest are read again from the last one reported.
func (d *decider) comments(cs *forge.ReviewComments) {
	if cs == nil || cs.NotModified {
		return
	}
	w := &d.pr.Watch
	for _, c := range cs.Items {
		if c.ID <= w.LastCommentID {
			continue
		}
		if d.room() <= 0 {
			return
		}
		c := c
		d.add(ReviewCommented, "comment:"+strconv.FormatInt(c.ID, 10), payload{HeadSHA: d.pr.HeadSHA, Comment: &c})
		w.LastCommentID = c.ID
		if c.UpdatedAt.After(w.CommentsSince) {
			w.CommentsSince = c.UpdatedAt.UTC().Truncate(time.Microsecond)
		}
	}
}

// newFailure returns the check a poll reports as failing, if the head's
// checks have all finished with failures not reported yet.
func newFailure(p kanban.PullRequest, ch *forge.Checks) (forge.FailedCheck, bool) {
	if ch == nil || ch.NotModified || ch.State != forge.ChecksFailing || ch.Pending > 0 || len(ch.Failing) == 0 ||
		p.Watch.ChecksReported == "failing:"+ch.SHA {
		return forge.FailedCheck{}, false
	}
	return ch.Failing[0], true
}

// checks takes the head's checks and reports a final result once per
// head: failing (with the auto-fix prompt when auto-fix is on and rounds
// are left), or passing. Pending checks are waited for.
func (d *decider) checks(ch *forge.Checks, log *forge.Log, s settings) {
	if ch == nil || ch.NotModified {
		return
	}
	p, w := &d.pr, &d.pr.Watch
	p.Checks = kanban.ChecksState(ch.State)
	if !p.Checks.Valid() {
		p.Checks = kanban.ChecksNone
	}
	if first, ok := newFailure(*p, ch); ok {
		w.ChecksReported, w.LastCheckID = "failing:"+ch.SHA, first.ID
		c := &Check{ID: first.ID, Name: first.Name, Conclusion: first.Conclusion, URL: first.URL}
		c.Excerpt, c.Truncated = tail(first.Summary, false)
		if log != nil {
			c.Excerpt, c.Truncated = tail(log.Text, log.Truncated)
		}
		for _, f := range ch.Failing[1:min(len(ch.Failing), maxFailingNames+1)] {
			c.Failing = append(c.Failing, f.Name)
		}
		pl := payload{HeadSHA: ch.SHA, Check: c}
		a := &p.Automation
		switch {
		case !p.Options.AutoFixEnabled:
		case a.AutoFixRounds < kanban.MaxAutoFixRounds:
			a.AutoFixRounds++
			a.LastFixAt = &d.now
			pl.Prompt = autoFixPrompt(s.override, *p, c)
		case a.AutoFixExhaustedAt == nil:
			a.AutoFixExhaustedAt = &d.now
		}
		d.add(ChecksFailing, "checks_failing:"+ch.SHA, pl)
	}
	if ch.State == forge.ChecksPassing && w.ChecksReported != "passing:"+ch.SHA {
		w.ChecksReported = "passing:" + ch.SHA
		d.add(ChecksPassing, "checks_passing:"+ch.SHA, payload{HeadSHA: ch.SHA})
	}
}

// tail keeps the end of s within kanban.MaxAutoFixExcerpt bytes, from a
// line start.
func tail(s string, truncated bool) (string, bool) {
	if len(s) <= kanban.MaxAutoFixExcerpt {
		return s, truncated
	}
	s = s[len(s)-kanban.MaxAutoFixExcerpt:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.ToValidUTF8(s, ""), true
}

// merge decides a merge, once per head, when auto-merge is on and the
// pull request is open, green, approved and mergeable.
func (d *decider) merge() {
	p := &d.pr
	if !p.Options.AutoMergeEnabled || p.State != kanban.PROpen || p.Checks != kanban.ChecksPassing || p.Review != kanban.ReviewApproved ||
		p.Mergeable == nil || !*p.Mergeable || p.HeadSHA == "" || p.Watch.MergeSHA == p.HeadSHA {
		return
	}
	p.Watch.MergeSHA, p.Automation.LastMergeAttemptAt = p.HeadSHA, &d.now
	d.add(kindMerge, "merge:"+p.HeadSHA, payload{HeadSHA: p.HeadSHA, Merge: &mergePlan{SHA: p.HeadSHA, Method: d.method}})
}

// lifecycle reports the pull request's end: merged, or closed without
// merging (with the lifecycle prompt when its switch is on).
func (d *decider) lifecycle(was kanban.PRState) {
	p := &d.pr
	switch {
	case was.Watched() && p.State == kanban.PRMerged:
		pl := payload{HeadSHA: p.HeadSHA}
		if p.Options.PromptOnMerged {
			pl.Prompt = lifecyclePrompt(ReasonMerged, *p)
		}
		d.add(Merged, kanban.PREventKeyMerged, pl)
	case was.Watched() && p.State == kanban.PRClosed:
		pl := payload{HeadSHA: p.HeadSHA}
		if p.Options.PromptOnClosed {
			pl.Prompt = lifecyclePrompt(ReasonClosed, *p)
		}
		d.add(Closed, "closed:"+strconv.Itoa(p.Watch.Reopens), pl)
	}
}
