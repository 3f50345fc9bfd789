package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const hookSecret = "s3cret-signing-key-0123"
const hookURL = "https://hooks.example.test/kandev?token=URLSECRET"

// seedNotifications fills every notification table (for the copy test).
func seedNotifications(t *testing.T, s *Store, ws, taskID string) {
	t.Helper()
	ctx := context.Background()
	n, created, err := s.AddNotification(ctx, kanban.Notification{WorkspaceID: ws, Kind: kanban.NotifyTurnFinished, TaskID: taskID,
		Title: "Turn finished: ü", DedupKey: "turn:1"})
	if err != nil || !created {
		t.Fatalf("add notification: created %v, err %v", created, err)
	}
	must(s.MarkNotificationsRead(ctx, ws, []string{n.ID}, false))(t)
	if err := s.SetNotifySetting(ctx, ws, kanban.NotifySetting{Kind: kanban.NotifyTaskFailed, Inbox: false}); err != nil {
		t.Fatal(err)
	}
	ch := must(s.CreateChannel(ctx, kanban.Channel{WorkspaceID: ws, Name: "hook", Type: kanban.ChannelWebhook, URL: kanban.NewSecret(hookURL),
		Secret: kanban.NewSecret(hookSecret), Events: []kanban.NotificationKind{kanban.NotifyTurnFinished}, Enabled: true}))(t)
	must(s.AddDelivery(ctx, kanban.Delivery{ChannelID: ch.ID, WorkspaceID: ws, NotificationID: n.ID, Kind: n.Kind, State: kanban.DeliveryDelivered,
		Attempts: 2, Status: 200}))(t)
}

func TestNotificationInbox(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		s := newTestStore(t)
		a, b := newBoard(t, s, "A"), newBoard(t, s, "B")
		for i := range 5 {
			_, created, err := s.AddNotification(ctx, kanban.Notification{WorkspaceID: a.ws.ID, Kind: kanban.NotifyQuestionAsked,
				Title: fmt.Sprintf("q%d %s", i, strings.Repeat("x", kanban.MaxNotificationTitleLen)), DedupKey: fmt.Sprintf("question:%d", i)})
			if err != nil || !created {
				t.Fatalf("add %d: created %v, err %v", i, created, err)
			}
		}
		if _, created, err := s.AddNotification(ctx, kanban.Notification{WorkspaceID: a.ws.ID, Kind: kanban.NotifyQuestionAsked,
			Title: "again", DedupKey: "question:0"}); err != nil || created {
			t.Fatalf("same event again: got created %v (err %v), want it skipped", created, err)
		}
		other, _, err := s.AddNotification(ctx, kanban.Notification{WorkspaceID: b.ws.ID, Kind: kanban.NotifyTaskFailed, Title: "b", DedupKey: "question:0"})
		if err != nil {
			t.Fatal(err)
		}
		p1 := must(s.ListNotifications(ctx, a.ws.ID, false, kanban.Page{Limit: 3}))(t)
		if len(p1.Items) != 3 || p1.NextCursor == "" || p1.Unread != 5 || !strings.HasPrefix(p1.Items[0].Title, "q4") {
			t.Fatalf("first page: got %d items (next %q, unread %d), want the 3 newest of 5 unread", len(p1.Items), p1.NextCursor, p1.Unread)
		}
		if n := len([]rune(p1.Items[0].Title)); n != kanban.MaxNotificationTitleLen {
			t.Fatalf("got a title of %d runes, want it clipped to %d", n, kanban.MaxNotificationTitleLen)
		}
		p2 := must(s.ListNotifications(ctx, a.ws.ID, false, kanban.Page{Limit: 3, Cursor: p1.NextCursor}))(t)
		if len(p2.Items) != 2 || p2.NextCursor != "" {
			t.Fatalf("second page: got %d items (next %q), want the last 2", len(p2.Items), p2.NextCursor)
		}
		// Another workspace's id marks nothing here.
		r := must(s.MarkNotificationsRead(ctx, a.ws.ID, []string{other.ID, p1.Items[0].ID}, false))(t)
		if r.Marked != 1 || r.Unread != 4 {
			t.Fatalf("mark read: got marked %d, unread %d; want 1 and 4", r.Marked, r.Unread)
		}
		if l := must(s.ListNotifications(ctx, b.ws.ID, true, kanban.Page{}))(t); len(l.Items) != 1 || l.Unread != 1 {
			t.Fatalf("the other workspace: got %d unread, want its one notification untouched", l.Unread)
		}
		r = must(s.MarkNotificationsRead(ctx, a.ws.ID, nil, true))(t)
		if r.Marked != 4 || r.Unread != 0 {
			t.Fatalf("mark all: got marked %d, unread %d; want 4 and 0", r.Marked, r.Unread)
		}
		checkRefusals(t, s, []refusal{
			{"no ids", func() error { _, err := s.MarkNotificationsRead(ctx, a.ws.ID, nil, false); return err }, kanban.CodeValidation},
			{"unknown kind", func() error {
				_, _, err := s.AddNotification(ctx, kanban.Notification{WorkspaceID: a.ws.ID, Kind: "pr_merged", Title: "x", DedupKey: "k"})
				return err
			}, kanban.CodeValidation},
			{"missing workspace", func() error { _, err := s.ListNotifications(ctx, "nope", false, kanban.Page{}); return err }, kanban.CodeNotFound},
			{"bad cursor", func() error { _, err := s.ListNotifications(ctx, a.ws.ID, false, kanban.Page{Cursor: "x"}); return err }, kanban.CodeValidation},
		})
	})
}

func TestNotifySettings(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		s := newTestStore(t)
		b := newBoard(t, s, "A")
		for _, st := range must(s.NotifySettings(ctx, b.ws.ID))(t) {
			if !st.Inbox {
				t.Fatalf("kind %s: got off by default, want every kind on", st.Kind)
			}
		}
		if err := s.SetNotifySetting(ctx, b.ws.ID, kanban.NotifySetting{Kind: kanban.NotifyTurnFinished}); err != nil {
			t.Fatal(err)
		}
		got := must(s.NotifySettings(ctx, b.ws.ID))(t)
		if len(got) != len(kanban.NotificationKinds) || got[0].Kind != kanban.NotifyTurnFinished || got[0].Inbox || !got[1].Inbox {
			t.Fatalf("got %+v, want turn_finished off and the rest on", got)
		}
		wantCode(t, s.SetNotifySetting(ctx, b.ws.ID, kanban.NotifySetting{Kind: "nope"}), kanban.CodeValidation)
	})
}

func TestChannelSecretsStayInside(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		ctx := context.Background()
		s := newTestStore(t)
		b := newBoard(t, s, "A")
		seedNotifications(t, s, b.ws.ID, "")
		l := must(s.ListChannels(ctx, b.ws.ID, kanban.Page{}))(t)
		if len(l.Items) != 1 {
			t.Fatalf("got %d channels, want 1", len(l.Items))
		}
		c := l.Items[0]
		js, _ := json.Marshal(c)
		text := fmt.Sprintf("%v %+v %#v %s", c, c, c, js)
		for _, secret := range []string{"URLSECRET", hookSecret, "hooks.example.test"} {
			if strings.Contains(text, secret) {
				t.Fatalf("a channel's text shows %q: %s", secret, text)
			}
		}
		if c.URLHint != "https://…" || !c.HasSecret || c.URL.Reveal() != hookURL {
			t.Fatalf("got hint %q, has_secret %v; want the scheme only and the secret kept", c.URLHint, c.HasSecret)
		}
		subs, err := s.ChannelsFor(ctx, b.ws.ID, kanban.NotifyTurnFinished)
		if err != nil || len(subs) != 1 || subs[0].Secret.Reveal() != hookSecret {
			t.Fatalf("channels for turn_finished: got %d (err %v), want the one with its secret", len(subs), err)
		}
		if none := must(s.ChannelsFor(ctx, b.ws.ID, kanban.NotifyQuestionAsked))(t); len(none) != 0 {
			t.Fatalf("channels for question_asked: got %d, want none subscribed", len(none))
		}
	})
}

func TestChannelRefusals(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	b := newBoard(t, s, "A")
	hook := func(u, secret string) func() error {
		return func() error {
			_, err := s.CreateChannel(ctx, kanban.Channel{WorkspaceID: b.ws.ID, Name: "h", Type: kanban.ChannelWebhook, URL: kanban.NewSecret(u),
				Secret: kanban.NewSecret(secret), Events: []kanban.NotificationKind{kanban.NotifyTaskFailed}})
			return err
		}
	}
	apprise := func(u string) func() error {
		return func() error {
			_, err := s.CreateChannel(ctx, kanban.Channel{WorkspaceID: b.ws.ID, Name: "a", Type: kanban.ChannelApprise, URL: kanban.NewSecret(u)})
			return err
		}
	}
	checkRefusals(t, s, []refusal{
		{"webhook ftp", hook("ftp://h/x", hookSecret), kanban.CodeValidation},
		{"webhook no host", hook("https:///x", hookSecret), kanban.CodeValidation},
		{"webhook credentials", hook("https://u:p@h/x", hookSecret), kanban.CodeValidation},
		{"webhook CRLF", hook("https://h/x\r\nX-Evil: 1", hookSecret), kanban.CodeValidation},
		{"webhook space", hook("https://h/x y", hookSecret), kanban.CodeValidation},
		{"webhook oversized", hook("https://h/"+strings.Repeat("a", kanban.MaxChannelURLLen), hookSecret), kanban.CodeValidation},
		{"webhook short secret", hook("https://h/x", "short"), kanban.CodeValidation},
		{"webhook secret newline", hook("https://h/x", hookSecret+"\nX-Evil: 1"), kanban.CodeValidation},
		{"apprise no scheme", apprise("slack-token"), kanban.CodeValidation},
		{"apprise two urls", apprise("json://a json://b"), kanban.CodeValidation},
		{"apprise option", apprise("--config=/etc/passwd"), kanban.CodeValidation},
		{"apprise newline", apprise("json://a\njson://b"), kanban.CodeValidation},
		{"missing workspace", func() error {
			_, err := s.CreateChannel(ctx, kanban.Channel{WorkspaceID: "nope", Name: "a", Type: kanban.ChannelApprise, URL: kanban.NewSecret("json://h")})
			return err
		}, kanban.CodeNotFound},
	})
	for i := range kanban.MaxChannelsPerWorkspace {
		if err := apprise(fmt.Sprintf("json://127.0.0.1:%d", 1000+i))(); err != nil {
			t.Fatal(err)
		}
	}
	checkRefusals(t, s, []refusal{{"past the bound", apprise("json://127.0.0.1:9"), kanban.CodeConflict}})
}
