package notify

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// item is one event waiting to become a notification: a turn that ended
// (its task is read when it is recorded) or a notification drafted from
// a published event.
type item struct {
	turn *kanban.TurnEvent
	pr   *kanban.PullRequestStateChanged
	n    kanban.Notification
}

// fromEvent drafts the notification a published event makes, if any:
// a question for the operator, a permission request, a failed session.
func fromEvent(event string, payload any) (item, bool) {
	switch event {
	case kanban.EventQuestionCreated.Name():
		q, ok := payload.(*kanban.Question)
		if !ok || q.Kind != kanban.QuestionForUser {
			return item{}, false // a parent question is its parent agent's to answer
		}
		title := "An agent asked a question"
		if len(q.Questions) > 0 {
			title = "Question: " + q.Questions[0].Prompt
		}
		return item{n: kanban.Notification{WorkspaceID: q.WorkspaceID, Kind: kanban.NotifyQuestionAsked, TaskID: q.TaskID,
			SessionID: q.SessionID, Title: title, Body: q.Context, DedupKey: "question:" + q.ID}}, true
	case kanban.EventPermissionRequested.Name():
		p, ok := payload.(*kanban.Permission)
		if !ok {
			return item{}, false
		}
		return item{n: kanban.Notification{WorkspaceID: p.WorkspaceID, Kind: kanban.NotifyPermissionNeeded, TaskID: p.TaskID,
			SessionID: p.SessionID, Title: "Permission needed: " + p.Title, DedupKey: "permission:" + p.ID}}, true
	case kanban.EventSessionUpdated.Name():
		s, ok := payload.(*kanban.Session)
		if !ok || s.State != kanban.SessionFailed {
			return item{}, false
		}
		return item{n: kanban.Notification{WorkspaceID: s.WorkspaceID, Kind: kanban.NotifyTaskFailed, TaskID: s.TaskID,
			SessionID: s.ID, Title: "A task's agent failed", Body: s.Error, DedupKey: "failed:" + s.ID}}, true
	}
	return item{}, false
}

// record turns queued events into notifications until the notifier stops.
func (n *Notifier) record() {
	defer n.wg.Done()
	for {
		select {
		case <-n.ctx.Done():
			return
		case it := <-n.intake:
			if err := n.process(n.ctx, it); err != nil && n.ctx.Err() == nil {
				n.log.Warn("notifications: record", "kind", string(it.n.Kind), "err", err)
			}
		}
	}
}

// process records one notification (once per event) in the inbox when
// the workspace's setting says so, publishes it, and queues its
// deliveries to the channels subscribed to its kind.
func (n *Notifier) process(ctx context.Context, it item) error {
	note := it.n
	task, err := n.task(ctx, it)
	if err != nil {
		return err
	}
	if it.turn != nil {
		note = kanban.Notification{WorkspaceID: task.WorkspaceID, Kind: kanban.NotifyTurnFinished, TaskID: task.ID,
			SessionID: it.turn.SessionID, Title: "Turn finished: " + task.Title, Body: "The agent ended its turn (" + it.turn.StopReason + ").",
			DedupKey: "turn:" + it.turn.SessionID + ":" + it.turn.StartedAt.UTC().Format("20060102T150405.000000000")}
	} else if it.pr != nil {
		note = prNote(it.pr, task)
	} else if task != nil && note.Kind == kanban.NotifyTaskFailed {
		note.Title = "Task failed: " + task.Title
	}
	settings, err := n.cfg.Store.NotifySettings(ctx, note.WorkspaceID)
	if err != nil {
		return err
	}
	if inbox(settings, note.Kind) {
		out, created, err := n.cfg.Store.AddNotification(ctx, note)
		if err != nil {
			return err
		}
		if !created {
			return nil // another backend, or an earlier publish, recorded this event
		}
		note = *out
		kanban.EventNotificationCreated.Publish(n.cfg.Publisher, "workspace:"+note.WorkspaceID, out)
	} else {
		note.ID, note.CreatedAt = kanban.NewID(), kanban.Now()
	}
	return n.queueDeliveries(ctx, note)
}

// task reads the task of a turn or a pull request (needed: the workspace
// and the title) or of a failed session (for its title; nil when it is
// gone).
func (n *Notifier) task(ctx context.Context, it item) (*kanban.Task, error) {
	switch {
	case it.turn != nil:
		return n.cfg.Store.GetTask(ctx, it.turn.TaskID)
	case it.pr != nil:
		return n.cfg.Store.GetTask(ctx, it.pr.PR.TaskID)
	case it.n.Kind == kanban.NotifyTaskFailed && it.n.TaskID != "":
		t, err := n.cfg.Store.GetTask(ctx, it.n.TaskID)
		if err != nil {
			return nil, nil //nolint:nilerr // the title is a nicety: a deleted task still failed
		}
		return t, nil
	}
	return nil, nil
}

func inbox(settings []kanban.NotifySetting, k kanban.NotificationKind) bool {
	for _, s := range settings {
		if s.Kind == k {
			return s.Inbox
		}
	}
	return true
}

// prChangeWords are how a notification words each change.
var prChangeWords = map[kanban.PRChange]string{
	kanban.PRChangeMerged: "merged", kanban.PRChangeClosed: "closed without merging",
	kanban.PRChangeChecksFailing: "checks failing", kanban.PRChangeChecksPassing: "checks passing",
	kanban.PRChangeApproved: "approved", kanban.PRChangeChangesRequested: "changes requested",
}

// prNote is the pr_state_changed notification of a change on a task's
// pull request: one per pull request and change key.
func prNote(ch *kanban.PullRequestStateChanged, task *kanban.Task) kanban.Notification {
	name, ref := "Pull request", "#"
	if ch.PR.Forge == kanban.ForgeGitLab {
		name, ref = "Merge request", "!"
	}
	body := ch.PR.URL
	switch {
	case ch.Detail != "" && ch.Change == kanban.PRChangeChecksFailing:
		body = "Failing check: " + ch.Detail + "\n" + body
	case ch.Detail != "":
		body = "By " + ch.Detail + "\n" + body
	}
	return kanban.Notification{WorkspaceID: task.WorkspaceID, Kind: kanban.NotifyPRStateChanged, TaskID: task.ID,
		Title:    fmt.Sprintf("%s %s%d %s: %s", name, ref, ch.PR.Number, prChangeWords[ch.Change], task.Title),
		Body:     body,
		DedupKey: clip("pr:"+ch.PR.ID+":"+ch.Key, kanban.MaxNotificationDedupLen)}
}

// clip cuts s to at most n bytes.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
