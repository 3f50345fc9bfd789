package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/notify"
	"github.com/kandev/kandev/apps/backend/internal/prwatch"
	wsclient "github.com/kandev/kandev/apps/backend/internal/ws"
)

const (
	prHeadA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	prHeadB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// TestPRStateChangedNotifications: the PR watcher's events, through the
// backend's own sink, become pr_state_changed notifications in the
// workspace's inbox (read with notification.list) and deliveries to a
// webhook channel subscribed to the kind: the head's checks failing, then
// passing, an approval and the merge, each once — the same event again, a
// second approval of the same head and a review that only comments add
// nothing; each delivery publishes task.pr_updated for the board. With
// the kind's inbox setting off, a change is delivered to the
// channel but not put in the inbox.
func TestPRStateChangedNotifications(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	hookURL, hooks := hookReceiver(t)
	ws := e.workspaceID()
	e.dispatch(kanban.ActionNotificationChannelCreate, action.ChannelCreateIn{WorkspaceID: ws, Name: "PR hook", Type: kanban.ChannelWebhook,
		URL: hookURL, Secret: "pr-hook-secret-0123456789", Events: []kanban.NotificationKind{kanban.NotifyPRStateChanged}}, nil)
	task, pr := e.linkedPR(ws, "Add the login form", prHeadA)
	redraws := e.countEvents(ws, kanban.EventPullRequestUpdated.Name())
	sink := &prSink{svc: e.b.svc, events: e.b.events, log: slog.New(slog.DiscardHandler)}
	deliver := func(ev prwatch.Event) {
		t.Helper()
		ev.PR = *pr
		if err := sink.Deliver(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	review := func(id int64, who string, st forge.ReviewState) *forge.Review {
		return &forge.Review{ID: id, Author: who, State: st, CommitSHA: prHeadA}
	}
	failing := prwatch.Event{ID: "e1", Kind: prwatch.ChecksFailing, HeadSHA: prHeadA, Check: &prwatch.Check{Name: "test (ubuntu)", Conclusion: "failure"}}
	deliver(failing)
	deliver(failing) // the same change again
	deliver(prwatch.Event{ID: "e2", Kind: prwatch.ChecksPassing, HeadSHA: prHeadA})
	deliver(prwatch.Event{ID: "e3", Kind: prwatch.ReviewSubmitted, Review: review(1, "bob", forge.ReviewApproved)})
	deliver(prwatch.Event{ID: "e4", Kind: prwatch.ReviewSubmitted, Review: review(2, "carol", forge.ReviewApproved)})
	deliver(prwatch.Event{ID: "e5", Kind: prwatch.ReviewSubmitted, Review: review(3, "dave", forge.ReviewCommented)})
	deliver(prwatch.Event{ID: "e6", Kind: prwatch.Merged})
	want := []string{
		"Pull request #7 merged: Add the login form",
		"Pull request #7 approved: Add the login form",
		"Pull request #7 checks passing: Add the login form",
		"Pull request #7 checks failing: Add the login form",
	}
	inbox := func() []kanban.Notification { return e.inboxOf(ws, kanban.NotifyPRStateChanged) }
	// The notifier records in order: once the merge (delivered last) is
	// in, every earlier change has been recorded or deduplicated.
	waitFor(t, func() bool { l := inbox(); return len(l) > 0 && l[0].Title == want[0] })
	got := inbox()
	if len(got) != len(want) {
		t.Fatalf("got %d pr_state_changed notifications, want %d: %+v", len(got), len(want), got)
	}
	for i, n := range got { // newest first
		if n.Title != want[i] || n.TaskID != task.ID {
			t.Errorf("notification %d: %q (task %s), want %q", i, n.Title, n.TaskID, want[i])
		}
	}
	if !strings.Contains(got[3].Body, "Failing check: test (ubuntu)") || !strings.Contains(got[1].Body, "By bob") {
		t.Errorf("bodies: %q, %q", got[3].Body, got[1].Body)
	}
	waitFor(t, func() bool { return len(hooks()) == len(want) })
	waitFor(t, func() bool { return redraws() == 7 }) // task.pr_updated for each delivery: the board redraws the pull request

	e.dispatch(kanban.ActionNotificationSettingsSet, json.RawMessage(`{"workspace_id":"`+ws+`","kind":"pr_state_changed","inbox":false}`), nil)
	deliver(prwatch.Event{ID: "e7", Kind: prwatch.ReviewSubmitted, Review: &forge.Review{ID: 4, Author: "erin", State: forge.ReviewChangesRequested, CommitSHA: prHeadB}})
	waitFor(t, func() bool { return len(hooks()) == len(want)+1 })
	last := hooks()[len(want)]
	if !strings.HasPrefix(last, "pr_state_changed ") || !strings.Contains(last, "changes requested") {
		t.Fatalf("the channel's last delivery: %q", last)
	}
	if n := len(inbox()); n != len(want) {
		t.Fatalf("with the inbox setting off the inbox has %d, want %d", n, len(want))
	}
}

// hookReceiver is a webhook channel's receiver on loopback: its URL and
// the deliveries it got ("EVENT BODY"), in arrival order.
func hookReceiver(t *testing.T) (string, func() []string) {
	var mu sync.Mutex
	var got []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		mu.Lock()
		got = append(got, r.Header.Get(notify.EventHeader)+" "+string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	return hook.URL, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(got) }
}

// linkedPR creates a task with a repository and an open pull request of
// it linked (head head), in workspace ws.
func (e *env) linkedPR(ws, title, head string) (*kanban.Task, *kanban.PullRequest) {
	e.t.Helper()
	ctx := context.Background()
	task := e.newTask(title)
	repo, err := e.b.store.CreateRepository(ctx, kanban.Repository{WorkspaceID: ws, Name: "app", RemoteURL: "https://github.com/o/app.git"})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.b.store.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: repo.ID, BaseBranch: "main"}); err != nil {
		e.t.Fatal(err)
	}
	pr, err := e.b.store.LinkPullRequest(ctx, kanban.PullRequest{TaskID: task.ID, RepositoryID: repo.ID, Forge: kanban.ForgeGitHub,
		ForgeRepo: "o/app", Number: 7, URL: "https://github.com/o/app/pull/7", State: kanban.PROpen, HeadSHA: head})
	if err != nil {
		e.t.Fatal(err)
	}
	return task, pr
}

// inboxOf returns the first page of a workspace's inbox, of one kind,
// newest first.
func (e *env) inboxOf(ws string, kind kanban.NotificationKind) []kanban.Notification {
	e.t.Helper()
	var l kanban.List[kanban.Notification]
	e.dispatch(kanban.ActionNotificationList, action.NotificationListIn{WorkspaceID: ws, Limit: 50}, &l)
	var out []kanban.Notification
	for _, n := range l.Items {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// countEvents subscribes an operator WebSocket client to a workspace and
// counts the notifications named name it receives.
func (e *env) countEvents(ws, name string) func() int {
	e.t.Helper()
	var n atomic.Int32
	c, err := wsclient.Dial(context.Background(), wsclient.ClientConfig{URL: e.wsURL(), Token: e.token, OnNotification: func(a string, _ json.RawMessage) {
		if a == name {
			n.Add(1)
		}
	}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	must(e.t, c.Call(context.Background(), kanban.ActionSubscribe, SubscribeIn{Topics: []string{action.WorkspaceTopic(ws)}}, nil))
	return func() int { return int(n.Load()) }
}
