package app

import (
	"context"
	"log/slog"

	"github.com/kandev/kandev/apps/backend/internal/action"
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
	return nil
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
