package app

import (
	"context"
	"log/slog"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/prwatch"
)

// prAuthor is who the PR automation's prompts are from, in conversations.
const prAuthor = "pr-automation"

// prSink acts on the PR watcher's events: the prompt the automation
// decided (auto-fix, review requested, merged, closed) or a reviewer's
// words (a line comment, a review with a text) is queued as the task's
// agent's next turn (delivered at once when it is idle); a comment is the
// step event on_comment and a merge on_pr_merged for the workflow engine.
// The watcher calls it once per event (its journal makes it so).
type prSink struct {
	svc    *action.Service
	events *kanban.DomainEvents
	log    *slog.Logger
}

// Deliver implements prwatch.Sink. An error (the prompt could not be
// queued) makes the watcher deliver the event again later; a task with
// no live agent session gets a note in its conversation instead.
func (s *prSink) Deliver(ctx context.Context, e prwatch.Event) error {
	p := e.Prompt
	if e.Kind == prwatch.ReviewCommented || e.Kind == prwatch.ReviewSubmitted {
		p = prwatch.ReviewPrompt(e)
	}
	if p != nil {
		if err := s.prompt(ctx, e, p); err != nil {
			return err
		}
	}
	switch {
	case e.Kind == prwatch.ReviewCommented || e.Kind == prwatch.ReviewSubmitted && p != nil:
		s.events.Emit(kanban.PullRequestCommented{TaskID: e.PR.TaskID, PullRequestID: e.PR.ID})
	case e.Kind == prwatch.Merged:
		s.events.Emit(kanban.PullRequestMerged{TaskID: e.PR.TaskID, PullRequestID: e.PR.ID})
	}
	if ch, ok := stateChange(e); ok {
		s.events.Emit(ch) // the pr_state_changed notification
	}
	pr := e.PR
	s.svc.PullRequestRead(ctx, &pr) // task.pr_updated: the board redraws it
	return nil
}

// stateChange is the state change a watcher event is, if any: a merge
// (once per pull request: a merge through Kandev has the same key), a
// close (per event: a reopened pull request can close again), the head's
// checks finished failing or passing, or a review that approves or
// requests changes (per head: a second approval of the same head is the
// same change).
func stateChange(e prwatch.Event) (kanban.PullRequestStateChanged, bool) {
	ch := kanban.PullRequestStateChanged{PR: e.PR}
	head := e.HeadSHA
	if head == "" {
		head = e.PR.HeadSHA
	}
	switch e.Kind {
	case prwatch.Merged:
		ch.Change, ch.Key = kanban.PRChangeMerged, string(kanban.PRChangeMerged)
	case prwatch.Closed:
		ch.Change, ch.Key = kanban.PRChangeClosed, string(kanban.PRChangeClosed)+":"+e.ID
	case prwatch.ChecksFailing:
		ch.Change = kanban.PRChangeChecksFailing
		if e.Check != nil {
			ch.Detail = e.Check.Name
		}
	case prwatch.ChecksPassing:
		ch.Change = kanban.PRChangeChecksPassing
	case prwatch.ReviewSubmitted:
		if e.Review == nil {
			return ch, false
		}
		switch e.Review.State {
		case forge.ReviewApproved:
			ch.Change = kanban.PRChangeApproved
		case forge.ReviewChangesRequested:
			ch.Change = kanban.PRChangeChangesRequested
		default:
			return ch, false
		}
		ch.Detail = e.Review.Author
		if e.Review.CommitSHA != "" {
			head = e.Review.CommitSHA
		}
	default:
		return ch, false
	}
	if ch.Key == "" {
		ch.Key = string(ch.Change) + ":" + head
	}
	return ch, true
}

// prompt queues p for the task's live agent session.
func (s *prSink) prompt(ctx context.Context, e prwatch.Event, p *prwatch.Prompt) error {
	_, err := s.svc.SendPrompt(ctx, e.PR.TaskID, prAuthor, p.Text)
	switch kanban.ErrorCode(err) {
	case "":
		s.log.Info("pr automation: prompt queued", "task", e.PR.TaskID, "pr", e.PR.ID, "reason", p.Reason, "event", e.ID)
		return nil
	case kanban.CodeConflict: // no live session
		s.svc.Record(ctx, e.PR.TaskID, "status", "PR automation ("+p.Reason+"): no agent session is running on the task, so its prompt was not sent.")
		return nil
	case kanban.CodeNotFound: // the task is gone
		return nil
	}
	return err
}
