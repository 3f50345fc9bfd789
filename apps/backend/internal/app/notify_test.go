package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

const (
	canaryURL    = "https://hooks.example.test/T0/B0?token=CANARY-URL-SECRET"
	canarySecret = "CANARY-SIGNING-SECRET-0123"
)

// TestNotificationChannelsOperatorOnly: over the real WebSocket, the
// operator configures a channel whose URL and secret never come back
// (every reply shows the scheme only) nor reach the logs; a session's
// token reaches no notification action; hostile payloads (bad URLs,
// header injection, oversized values) are refused without echoing them,
// and change nothing.
func TestNotificationChannelsOperatorOnly(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	op, err := ws.Dial(ctx, ws.ClientConfig{URL: e.wsURL(), Token: e.token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Close() })
	var created json.RawMessage
	if err := op.Call(ctx, kanban.ActionNotificationChannelCreate, map[string]any{"name": "Ops hook", "type": "webhook", "url": canaryURL,
		"secret": canarySecret, "events": []string{"task_failed", "question_asked"}}, &created); err != nil {
		t.Fatal(err)
	}
	var list json.RawMessage
	if err := op.Call(ctx, kanban.ActionNotificationChannelList, map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	var ch kanban.Channel
	if err := json.Unmarshal(created, &ch); err != nil || ch.URLHint != "https://…" || !ch.HasSecret {
		t.Fatalf("created: got %s (%v), want the scheme only and has_secret", created, err)
	}
	for _, raw := range []string{string(created), string(list)} {
		if strings.Contains(raw, "CANARY") || strings.Contains(raw, "hooks.example.test") {
			t.Fatalf("a reply shows the channel's URL or secret: %s", raw)
		}
	}

	sess := e.sessionMCP(kanban.ModeConfig, "")
	sc, err := ws.Dial(ctx, ws.ClientConfig{URL: e.wsURL(), Token: sess.Token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Close() })
	before := e.fingerprint()
	for _, a := range []kanban.Action{kanban.ActionNotificationChannelList, kanban.ActionNotificationChannelCreate, kanban.ActionNotificationChannelUpdate,
		kanban.ActionNotificationChannelDelete, kanban.ActionNotificationDeliveryList, kanban.ActionNotificationList, kanban.ActionNotificationMarkRead,
		kanban.ActionNotificationSettingsGet, kanban.ActionNotificationSettingsSet} {
		if err := sc.Call(ctx, a, map[string]any{"id": ch.ID}, nil); !isCode(err, kanban.CodeForbidden) {
			t.Fatalf("a config-mode session calls %s: got %v, want FORBIDDEN", a, err)
		}
	}

	refuseHostileChannels(t, op)
	if err := op.Call(ctx, kanban.ActionNotificationChannelUpdate, map[string]any{"id": ch.ID, "url": "ftp://CANARY/x"}, nil); !isCode(err, kanban.CodeValidation) {
		t.Fatalf("a bad URL on update: got %v, want VALIDATION_ERROR", err)
	}
	if after := e.fingerprint(); after != before {
		t.Fatal("a refused call changed the database")
	}
	if logs := e.logs.String(); strings.Contains(logs, "CANARY") {
		t.Fatal("the logs show a channel's URL or secret")
	}
	var dl kanban.List[kanban.Delivery]
	if err := e.tryDispatch(action.Principal{Kind: action.Operator}, kanban.ActionNotificationDeliveryList, map[string]any{"channel_id": ch.ID, "limit": 10}, &dl); err != nil {
		t.Fatal(err)
	}
}

// refuseHostileChannels sends channel.create payloads that must be
// refused (VALIDATION_ERROR) without their values in the error.
func refuseHostileChannels(t *testing.T, op *ws.Client) {
	t.Helper()
	ctx := context.Background()
	hostile := []map[string]any{
		{"name": "x", "type": "webhook", "url": "https://h/x\r\nX-Injected: 1", "secret": canarySecret, "events": []string{}},
		{"name": "x", "type": "webhook", "url": "javascript:alert(1)", "secret": canarySecret, "events": []string{}},
		{"name": "x", "type": "webhook", "url": "https://user:CANARY-PASS@h/x", "secret": canarySecret, "events": []string{}},
		{"name": "x", "type": "webhook", "url": "https://h/" + strings.Repeat("A", kanban.MaxChannelURLLen), "secret": canarySecret, "events": []string{}},
		{"name": "x", "type": "webhook", "url": "https://h/x", "secret": canarySecret + "\r\nX-Injected: 1", "events": []string{}},
		{"name": "x", "type": "webhook", "url": "https://h/x", "secret": "short", "events": []string{}},
		{"name": strings.Repeat("N", 100_000), "type": "apprise", "url": "json://h", "events": []string{}},
		{"name": "x", "type": "apprise", "url": "json://a json://CANARY-SECOND", "events": []string{}},
		{"name": "x", "type": "apprise", "url": "--config=/etc/passwd", "events": []string{}},
		{"name": "x", "type": "apprise", "url": "json://h", "secret": canarySecret, "events": []string{}},
		{"name": "x", "type": "apprise", "url": "json://h", "events": []string{"pr_merged"}},
		{"name": "x", "type": "sms", "url": "json://h", "events": []string{}},
		{"name": "x", "type": "apprise", "url": "json://h", "events": []string{}, "headers": map[string]string{"X-A": "b"}},
	}
	for i, p := range hostile {
		err := op.Call(ctx, kanban.ActionNotificationChannelCreate, p, nil)
		if !isCode(err, kanban.CodeValidation) {
			t.Fatalf("hostile payload %d: got %v, want VALIDATION_ERROR", i, err)
		}
		if msg := err.Error(); strings.Contains(msg, "CANARY") || strings.Contains(msg, "Injected") || strings.Contains(msg, "/etc/passwd") {
			t.Fatalf("hostile payload %d: the refusal echoes the value: %s", i, msg)
		}
	}
}
