package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardInboxLive: with the Notification permission granted in the
// browser profile and the operator opted in, a turn that ends on a task
// (a domain event, as the runtime emits it) shows up live: the unread
// count in the navigation, a new entry in the inbox and a browser
// notification; marking all read clears the count, also after a reload.
func TestBoardInboxLive(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ws, err := e.b.store.DefaultWorkspaceID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	task, _, err := e.b.store.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: ws, Title: "Write the release notes"})
	if err != nil {
		t.Fatal(err)
	}
	b := newTab(t, e)
	if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: e.url}); err != nil {
		t.Fatalf("grant the notification permission: %v", err)
	}
	b.signIn()
	b.open("#/inbox", "inbox")
	b.until("the empty inbox", `document.querySelector('#inbox') && document.querySelector('#inbox').children.length === 0`)
	b.click("#browser-notify")
	b.until("the opt-in", `localStorage.getItem('kandev.browserNotifications') === '1' && document.getElementById('browser-notify').textContent.includes('off')`)
	b.open("#/", "board")
	e.b.events.Emit(kanban.TurnEvent{SessionID: "sess-1", TaskID: task.ID, StartedAt: time.Now(), Ended: true, StopReason: "end_turn"})
	b.until("the unread count", `document.getElementById('inbox-count').textContent === '1' && !document.getElementById('inbox-count').hidden`)
	b.until("the browser notification", `window.kandevShown === 1`)
	b.open("#/inbox", "inbox")
	entry := fmt.Sprintf(`document.querySelector('#inbox li.unread[data-kind=turn_finished] a[href="#/task/%s"]')`, task.ID)
	b.until("the inbox entry", entry)
	if got := b.str(entry + `.textContent`); got != "Turn finished: Write the release notes" {
		t.Fatalf("the entry reads %q", got)
	}
	// A second event arrives while the inbox is open: prepended live.
	e.b.events.Emit(kanban.TurnEvent{SessionID: "sess-1", TaskID: task.ID, StartedAt: time.Now().Add(time.Second), Ended: true, StopReason: "max_tokens"})
	b.until("the second entry", `document.querySelectorAll('#inbox li.unread').length === 2 && document.getElementById('inbox-count').textContent === '2'`)
	b.shot("board-inbox")
	b.click("#mark-all-read")
	b.until("all read", `document.querySelectorAll('#inbox li.unread').length === 0 && document.getElementById('inbox-count').hidden`)
	b.open("#/inbox", "inbox")
	b.until("read after a reload", `document.querySelectorAll('#inbox li').length === 2 && document.querySelectorAll('#inbox li.unread').length === 0`)
	l, err := e.b.store.ListNotifications(ctx, ws, true, kanban.Page{})
	if err != nil || l.Unread != 0 {
		t.Fatalf("the store: got %d unread (err %v), want 0", l.Unread, err)
	}
}
