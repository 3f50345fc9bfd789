package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/notify"
	"github.com/kandev/kandev/apps/backend/internal/redact"
	"github.com/kandev/kandev/apps/backend/internal/vault"
)

// TestAppriseURLFromSecret: an Apprise channel whose URL is
// "secret:NAME" delivers to the URL the named secret holds (read at
// delivery, given to apprise only), and one naming a missing secret
// fails without retrying, naming the secret and showing no URL.
func TestAppriseURLFromSecret(t *testing.T) {
	if _, err := exec.LookPath("apprise"); err != nil {
		if os.Getenv("KANDEV_NOTIFY_TESTS") == "1" {
			t.Fatal("apprise is not installed (make apprise)")
		}
		t.Skip("apprise is not installed")
	}
	got := make(chan map[string]any, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m)
		got <- m
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	var sec *vault.Secrets
	f := newFixture(t, notify.Config{Timeout: 60 * time.Second, Attempts: 2, Backoff: time.Millisecond,
		Secret: func(ctx context.Context, ref string) (string, error) { return sec.Resolve(ctx, ref) }}, true)
	key, err := vault.ParseKey(vault.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	if sec, err = vault.Open(context.Background(), key, f.st, redact.New()); err != nil {
		t.Fatal(err)
	}
	if _, err := sec.Set(context.Background(), "APPRISE_TEAM", "json://"+strings.TrimPrefix(srv.URL, "http://")+"/apprise"); err != nil {
		t.Fatal(err)
	}
	task, _, err := f.st.CreateTask(context.Background(), kanban.TaskCreate{WorkspaceID: f.ws, Title: "From the vault"})
	if err != nil {
		t.Fatal(err)
	}
	f.channel(kanban.ChannelApprise, "secret:APPRISE_TEAM", "", kanban.NotifyTurnFinished)
	f.n.React(kanban.TurnEvent{SessionID: "s-1", TaskID: task.ID, StartedAt: time.Now(), Ended: true, StopReason: "end_turn"})
	select {
	case m := <-got:
		if m["title"] != "Turn finished: From the vault" {
			t.Fatalf("got %v, want the turn's notification", m)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the json:// receiver got nothing")
	}
	ds := f.deliveries("the apprise delivery to settle", settled)
	if len(ds) != 1 || ds[0].State != kanban.DeliveryDelivered {
		t.Fatalf("got %+v, want one delivery, delivered", ds)
	}
	noSecrets(t, f)
}

func TestAppriseMissingSecret(t *testing.T) {
	f := newFixture(t, notify.Config{Apprise: "/bin/true", Attempts: 3, Backoff: time.Millisecond,
		Secret: func(context.Context, string) (string, error) { return "", kanban.NotFound("secret") }}, true)
	task, _, err := f.st.CreateTask(context.Background(), kanban.TaskCreate{WorkspaceID: f.ws, Title: "Nowhere"})
	if err != nil {
		t.Fatal(err)
	}
	f.channel(kanban.ChannelApprise, "secret:GONE", "", kanban.NotifyTurnFinished)
	f.n.React(kanban.TurnEvent{SessionID: "s-1", TaskID: task.ID, StartedAt: time.Now(), Ended: true, StopReason: "end_turn"})
	ds := f.deliveries("the delivery to fail", settled)
	if len(ds) != 1 || ds[0].State != kanban.DeliveryFailed || ds[0].Attempts != 1 ||
		!strings.Contains(ds[0].Error, "refers to secret GONE, which could not be read (NOT_FOUND)") {
		t.Fatalf("got %+v, want one failed attempt naming the secret", ds)
	}
	if _, err := f.st.CreateChannel(context.Background(), kanban.Channel{WorkspaceID: f.ws, Name: "bad", Type: kanban.ChannelWebhook,
		URL: kanban.NewSecret("secret:GONE"), Secret: kanban.NewSecret(secret), Events: []kanban.NotificationKind{}}); kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Errorf("a webhook channel naming a secret: got %v, want VALIDATION_ERROR (only Apprise URLs take references)", err)
	}
}
