package notify_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/notify"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

const secret = "whsec-0123456789abcdef"

// recorder is a publisher that keeps what it was given.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Publish(topic, event string, _ any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, topic+" "+event)
}

func (r *recorder) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e == s {
			return true
		}
	}
	return false
}

type fixture struct {
	t   *testing.T
	st  *store.Store
	ws  string
	pub *recorder
	log *bytes.Buffer
	n   *notify.Notifier
}

// newFixture opens a real store and builds a notifier on it, started
// when start is set.
func newFixture(t *testing.T, cfg notify.Config, start bool) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := action.Seed(ctx, st); err != nil {
		t.Fatal(err)
	}
	ws, err := st.DefaultWorkspaceID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, st: st, ws: ws, pub: &recorder{}, log: &bytes.Buffer{}}
	cfg.Store, cfg.Publisher = st, f.pub
	cfg.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: f.log}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.Backoff == 0 {
		cfg.Backoff = 10 * time.Millisecond
	}
	f.n = notify.New(cfg)
	if start {
		f.n.Start(t.Context())
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f.n.Close(ctx)
	})
	return f
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (f *fixture) channel(typ kanban.ChannelType, url, sec string, kinds ...kanban.NotificationKind) *kanban.Channel {
	f.t.Helper()
	c, err := f.st.CreateChannel(context.Background(), kanban.Channel{WorkspaceID: f.ws, Name: string(typ), Type: typ,
		URL: kanban.NewSecret(url), Secret: kanban.NewSecret(sec), Events: kinds, Enabled: true})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// ask publishes, through the notifier's tap, a question for the operator.
func (f *fixture) ask(id string) {
	q := &kanban.Question{ID: id, Kind: kanban.QuestionForUser, WorkspaceID: f.ws, TaskID: "t", SessionID: "s",
		Questions: []kanban.QuestionItem{{ID: "q1", Prompt: "Which database?"}}}
	kanban.EventQuestionCreated.Publish(f.n.Tap(f.pub), "workspace:"+f.ws, q)
}

// deliveries waits (bounded) until cond holds of the delivery log.
func (f *fixture) deliveries(what string, cond func([]kanban.Delivery) bool) []kanban.Delivery {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l, err := f.st.ListDeliveries(context.Background(), f.ws, "", kanban.Page{Limit: kanban.MaxLimit})
		if err != nil {
			f.t.Fatal(err)
		}
		if cond(l.Items) {
			return l.Items
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s; deliveries: %+v", what, l.Items)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func settled(ds []kanban.Delivery) bool {
	for _, d := range ds {
		if d.State == kanban.DeliveryQueuedState {
			return false
		}
	}
	return len(ds) > 0
}

// TestWebhookSignedAndRetried: a receiver on loopback answers 500 once,
// then checks the HMAC of the retry and its timestamp, and accepts it.
func TestWebhookSignedAndRetried(t *testing.T) {
	type got struct {
		sig, ts, delivery string
		body              []byte
	}
	var mu sync.Mutex
	var reqs []got
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, got{r.Header.Get(notify.SignatureHeader), r.Header.Get(notify.TimestampHeader), r.Header.Get(notify.DeliveryHeader), body})
		n := len(reqs)
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		ts, err := strconv.ParseInt(r.Header.Get(notify.TimestampHeader), 10, 64)
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(r.Header.Get(notify.TimestampHeader) + "." + string(body)))
		want := "sha256=" + hex.EncodeToString(m.Sum(nil))
		if err != nil || time.Since(time.Unix(ts, 0)) > 5*time.Minute || !hmac.Equal([]byte(want), []byte(r.Header.Get(notify.SignatureHeader))) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	f := newFixture(t, notify.Config{Attempts: 3}, true)
	f.channel(kanban.ChannelWebhook, srv.URL+"/hook?key=URLSECRET", secret, kanban.NotifyQuestionAsked)
	f.ask("q-1")
	ds := f.deliveries("the delivery to settle", settled)
	if len(ds) != 1 || ds[0].State != kanban.DeliveryDelivered || ds[0].Attempts != 2 || ds[0].Status != http.StatusNoContent {
		t.Fatalf("got %+v, want one delivery delivered on the 2nd attempt (204)", ds)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reqs) != 2 || reqs[0].delivery != reqs[1].delivery || reqs[1].delivery != ds[0].ID {
		t.Fatalf("got %d requests (delivery ids %q), want 2 with the delivery's id", len(reqs), reqs)
	}
	var p notify.Payload
	if err := json.Unmarshal(reqs[1].body, &p); err != nil || p.Event != "question_asked" || p.Notification.Title != "Question: Which database?" {
		t.Fatalf("got payload %s (%v), want the question's notification", reqs[1].body, err)
	}
	if tampered := notify.Sign(secret, reqs[1].ts, append(reqs[1].body, ' ')); tampered == reqs[1].sig {
		t.Fatal("a changed body has the same signature")
	}
	if !f.pub.has("workspace:"+f.ws+" notification.created") || !f.pub.has("workspace:"+f.ws+" question.created") {
		t.Fatalf("got events %v, want the question relayed and notification.created published", f.pub.events)
	}
	l, err := f.st.ListNotifications(context.Background(), f.ws, true, kanban.Page{})
	if err != nil || len(l.Items) != 1 || l.Unread != 1 {
		t.Fatalf("inbox: got %+v (err %v), want the one unread notification", l, err)
	}
	noSecrets(t, f)
}

// noSecrets fails when the logs or the delivery log show a URL or secret.
func noSecrets(t *testing.T, f *fixture) {
	t.Helper()
	ds, err := f.st.ListDeliveries(context.Background(), f.ws, "", kanban.Page{Limit: kanban.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(ds)
	text := f.log.String() + string(js)
	for _, s := range []string{"URLSECRET", secret, "127.0.0.1"} {
		if strings.Contains(text, s) {
			t.Fatalf("the logs or the delivery log show %q: %s", s, text)
		}
	}
}

// TestWebhookFailures: a refusal (400) and a redirect are not retried;
// an unreachable receiver is, up to Attempts; none of it logs the URL.
func TestWebhookFailures(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	dead := closed.URL
	closed.Close()
	f := newFixture(t, notify.Config{Attempts: 3}, true)
	f.channel(kanban.ChannelWebhook, srv.URL+"/refuse?key=URLSECRET", secret, kanban.NotifyQuestionAsked)
	f.channel(kanban.ChannelWebhook, srv.URL+"/redirect?key=URLSECRET", secret, kanban.NotifyQuestionAsked)
	f.channel(kanban.ChannelWebhook, dead+"/gone?key=URLSECRET", secret, kanban.NotifyQuestionAsked)
	f.ask("q-2")
	ds := f.deliveries("three deliveries to settle", func(ds []kanban.Delivery) bool { return len(ds) == 3 && settled(ds) })
	byStatus := map[int]kanban.Delivery{}
	for _, d := range ds {
		if d.State != kanban.DeliveryFailed {
			t.Fatalf("got %+v, want every delivery failed", d)
		}
		byStatus[d.Status] = d
	}
	if d := byStatus[http.StatusBadRequest]; d.Attempts != 1 || !strings.Contains(d.Error, "refused") {
		t.Fatalf("400: got %+v, want one attempt, refused", d)
	}
	if d := byStatus[http.StatusFound]; d.Attempts != 1 {
		t.Fatalf("302: got %+v, want one attempt and the redirect not followed", d)
	}
	if d := byStatus[0]; d.Attempts != 3 || d.Error != "the receiver could not be reached" {
		t.Fatalf("unreachable: got %+v, want 3 attempts", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["/elsewhere"] != 0 {
		t.Fatal("the redirect was followed")
	}
	noSecrets(t, f)
}

// TestQueueFullNeverBlocks: with the notifier stopped and a queue of 2,
// 200 events return at once (the first two queued, the rest dropped and
// counted); started, it records the two.
func TestQueueFullNeverBlocks(t *testing.T) {
	f := newFixture(t, notify.Config{Queue: 2}, false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			f.ask("q-" + strconv.Itoa(i))
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the event path blocked on a full queue")
	}
	if got := f.n.Dropped(); got != 198 {
		t.Fatalf("got %d dropped, want 198", got)
	}
	if !strings.Contains(f.log.String(), "queue is full") {
		t.Fatalf("got logs %q, want the drops logged", f.log.String())
	}
	f.n.Start(t.Context())
	deadline := time.Now().Add(20 * time.Second)
	for {
		l, err := f.st.ListNotifications(context.Background(), f.ws, false, kanban.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d notifications, want the 2 queued ones", len(l.Items))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDeliveryQueueFull: one worker held by a slow receiver and a queue
// of one: later deliveries are logged dropped, the event path never waits.
func TestDeliveryQueueFull(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	f := newFixture(t, notify.Config{DeliveryQueue: 1, Workers: 1, Timeout: 30 * time.Second}, true)
	f.channel(kanban.ChannelWebhook, srv.URL, secret, kanban.NotifyQuestionAsked)
	for i := range 5 {
		f.ask("q-" + strconv.Itoa(i))
	}
	f.deliveries("five deliveries logged, some dropped", func(ds []kanban.Delivery) bool {
		dropped := 0
		for _, d := range ds {
			if d.State == kanban.DeliveryDropped {
				dropped++
			}
		}
		return len(ds) == 5 && dropped >= 3
	})
	close(release)
	ds := f.deliveries("the rest delivered", settled)
	states := map[kanban.DeliveryState]int{}
	for _, d := range ds {
		states[d.State]++
		if d.State == kanban.DeliveryDropped && d.Error != "the delivery queue was full" {
			t.Fatalf("got %+v, want the reason of the drop", d)
		}
	}
	if states[kanban.DeliveryDelivered]+states[kanban.DeliveryDropped] != 5 || states[kanban.DeliveryDelivered] < 1 {
		t.Fatalf("got states %v, want each delivery delivered or dropped", states)
	}
}

// TestAppriseJSONTarget runs Debian's apprise against a json:// target
// on loopback: the receiver gets the turn's notification.
func TestAppriseJSONTarget(t *testing.T) {
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
	f := newFixture(t, notify.Config{Timeout: 60 * time.Second}, true)
	task, _, err := f.st.CreateTask(context.Background(), kanban.TaskCreate{WorkspaceID: f.ws, Title: "-rf Ship the release"})
	if err != nil {
		t.Fatal(err)
	}
	f.channel(kanban.ChannelApprise, "json://"+strings.TrimPrefix(srv.URL, "http://")+"/apprise", "", kanban.NotifyTurnFinished)
	f.n.React(kanban.TurnEvent{SessionID: "s-1", TaskID: task.ID, StartedAt: time.Now(), Ended: true, StopReason: "end_turn"})
	select {
	case m := <-got:
		if m["title"] != "Turn finished: -rf Ship the release" || m["type"] != "success" || !strings.Contains(m["message"].(string), "end_turn") {
			t.Fatalf("got %v, want the turn's notification", m)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the json:// receiver got nothing")
	}
	ds := f.deliveries("the apprise delivery to settle", settled)
	if len(ds) != 1 || ds[0].State != kanban.DeliveryDelivered || ds[0].Attempts != 1 {
		t.Fatalf("got %+v, want one delivery, delivered", ds)
	}
	noSecrets(t, f)
}
