package prwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const webhookSecret = "whsec_0123456789abcdef0123456789abcdef"

func webhookSchemas(t *testing.T) *forgetest.Webhooks {
	t.Helper()
	w, err := forgetest.LoadWebhooks()
	if err != nil {
		if os.Getenv(forgetest.EnvRequired) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return w
}

// delivery builds a webhook payload GitHub documents: the smallest its
// schema allows with values set at dotted paths, checked against it.
func delivery(t *testing.T, w *forgetest.Webhooks, name string, values map[string]any) []byte {
	t.Helper()
	m, err := w.Minimal(name)
	must(t, err)
	values["repository.name"], values["repository.owner.login"] = repoName, owner
	for path, v := range values {
		cur := m
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
		cur[parts[len(parts)-1]] = v
	}
	body, err := json.Marshal(m)
	must(t, err)
	if err := w.Check(name, body); err != nil {
		t.Fatalf("the test's %s payload is not one GitHub documents: %v", name, err)
	}
	return body
}

// post sends a delivery to h and returns the status.
func post(h http.Handler, event string, body []byte, signature string) int {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/github", bytes.NewReader(body))
	req.Header.Set("X-GitHub-Event", event)
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestWebhook: a forged, missing or stale signature is 401 and nothing
// is recorded; a signed review comment is recorded once, however many
// times it is delivered and whether the poll saw it first or not; a check
// run's delivery makes the pull request due at once.
func TestWebhook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	schemas := webhookSchemas(t)
	secret, err := credential.Parse(webhookSecret)
	must(t, err)
	h := e.w.Webhook(Static(secret))
	at := time.Now().UTC().Truncate(time.Second)
	comment := func(id int64, body string) []byte {
		return delivery(t, schemas, "pull-request-review-comment-created", map[string]any{"number": e.pr.Number, "pull_request.number": e.pr.Number,
			"pull_request.head.sha": sha1, "comment.id": id, "comment.body": body, "comment.path": "src/login.go", "comment.line": 7,
			"comment.side": "RIGHT", "comment.commit_id": sha1, "comment.created_at": at.Format(time.RFC3339),
			"comment.updated_at": at.Format(time.RFC3339), "comment.user.login": "bob"})
	}
	body := comment(987654321012, "Please add a test.")
	checkRefusedSignatures(t, e, h, body)

	for range 2 { // GitHub redelivers
		if got := post(h, "pull_request_review_comment", body, forgetest.Sign(webhookSecret, body)); got != http.StatusAccepted {
			t.Fatalf("signed delivery: got %d, want 202", got)
		}
	}
	if j := e.journal(); j != "comment:987654321012=pending" {
		t.Fatalf("journal after two deliveries: %q", j)
	}
	if p := e.record(); p.Watch.NextPollAt.After(time.Now()) {
		t.Fatalf("the delivery did not make the pull request due (next poll %v)", p.Watch.NextPollAt)
	}
	// The poll then sees the same comment on the forge: still one event.
	e.gh.AddReviewComment(owner, repoName, e.pr.Number, forgetest.ReviewComment{User: "bob", Body: "Please add a test.", Path: "src/login.go",
		Line: 7, Side: "RIGHT", CommitID: sha1, CreatedAt: at})
	e.steps(e.w, 3)
	comments := e.sink.of(ReviewCommented)
	if len(comments) != 2 || comments[0].Comment.ID != 987654321012 || comments[0].Comment.Body != "Please add a test." {
		t.Fatalf("comment events %+v: want the webhook's, then the forge's own (another id)", comments)
	}
	// A comment the poll saw first, delivered late by the webhook: nothing more.
	seen := comments[1].Comment
	late := comment(seen.ID, seen.Body)
	if got := post(h, "pull_request_review_comment", late, forgetest.Sign(webhookSecret, late)); got != http.StatusAccepted {
		t.Fatalf("late delivery: %d", got)
	}
	e.steps(e.w, 2)
	if n := len(e.sink.of(ReviewCommented)); n != 2 {
		t.Fatalf("a late delivery of a comment the poll saw made %d comment events, want 2", n)
	}

	checkIgnoredDeliveries(t, e, h)

	checkRunMakesDue(t, e, h, schemas)
}

// checkRefusedSignatures: a forged, missing or stale signature is 401 and
// nothing is recorded; without a secret, 503.
func checkRefusedSignatures(t *testing.T, e *env, h http.Handler, body []byte) {
	t.Helper()
	before := e.fingerprint()
	for _, c := range []struct{ name, sig string }{
		{"forged", forgetest.Sign("not-the-secret", body)},
		{"missing", ""},
		{"of another body", forgetest.Sign(webhookSecret, []byte(`{"action":"created"}`))},
		{"malformed", "sha256=zz"},
		{"sha1 form", "sha1=" + strings.Repeat("0", 40)},
	} {
		if got := post(h, "pull_request_review_comment", body, c.sig); got != http.StatusUnauthorized {
			t.Errorf("%s signature: got %d, want 401", c.name, got)
		}
	}
	if after := e.fingerprint(); after != before {
		t.Fatalf("a refused delivery changed the store:\n%s\n→\n%s", before, after)
	}
	if got := post(e.w.Webhook(Static(credential.Token{})), "pull_request_review_comment", body, forgetest.Sign(webhookSecret, body)); got != http.StatusServiceUnavailable {
		t.Fatalf("without a secret: got %d, want 503", got)
	}
}

// checkIgnoredDeliveries: deliveries the watcher does not act on, and
// refusals (not JSON, not a POST, too many being read, too large).
func checkIgnoredDeliveries(t *testing.T, e *env, h http.Handler) {
	t.Helper()
	ping := []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)
	if got := post(h, "ping", ping, forgetest.Sign(webhookSecret, ping)); got != http.StatusAccepted {
		t.Fatalf("ping: %d", got)
	}
	junk := []byte(`{"action":`)
	if got := post(h, "pull_request", junk, forgetest.Sign(webhookSecret, junk)); got != http.StatusBadRequest {
		t.Fatalf("a payload that is not JSON: %d", got)
	}
	req := httptest.NewRequest(http.MethodGet, "/webhooks/github", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", rec.Code)
	}
	for range maxWebhookReads { // deliveries being read
		e.w.webhookReads <- struct{}{}
	}
	if got := post(h, "ping", ping, forgetest.Sign(webhookSecret, ping)); got != http.StatusServiceUnavailable {
		t.Fatalf("with %d deliveries being read: got %d, want 503", maxWebhookReads, got)
	}
	for range maxWebhookReads {
		<-e.w.webhookReads
	}
	huge := bytes.Repeat([]byte(" "), forge.MaxWebhookBody+1)
	if got := post(h, "pull_request", huge, forgetest.Sign(webhookSecret, huge)); got != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over the bound: %d", got)
	}
}

// checkRunMakesDue: a check run completing makes the pull request due at
// once.
func checkRunMakesDue(t *testing.T, e *env, h http.Handler, schemas *forgetest.Webhooks) {
	t.Helper()
	p := e.record()
	p.Watch.NextPollAt = time.Now().Add(time.Hour)
	_, err := e.st.RecordPoll(context.Background(), *p, nil)
	must(t, err)
	ex, err := schemas.Example("check-run-completed")
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(ex, &m))
	m["repository"].(map[string]any)["name"], m["repository"].(map[string]any)["owner"].(map[string]any)["login"] = repoName, owner
	cr := m["check_run"].(map[string]any)
	cr["head_sha"] = sha1
	cr["pull_requests"].([]any)[0].(map[string]any)["number"] = e.pr.Number
	run, err := json.Marshal(m)
	must(t, err)
	must(t, schemas.Check("check-run-completed", run))
	if got := post(h, "check_run", run, forgetest.Sign(webhookSecret, run)); got != http.StatusAccepted {
		t.Fatalf("check run delivery: %d", got)
	}
	if p := e.record(); p.Watch.NextPollAt.After(time.Now()) {
		t.Fatalf("the check run's delivery did not make the pull request due (next poll %v)", p.Watch.NextPollAt)
	}
}

// fingerprint is the pull request's record and journal as text.
func (e *env) fingerprint() string {
	e.t.Helper()
	p := e.record()
	b, err := json.Marshal(p)
	must(e.t, err)
	return string(b) + "\n" + e.journal()
}

// TestRunTakesWebhooks: the running watcher (its own loop, an hour
// between polls) polls a newly linked pull request at once, then sleeps;
// a webhook delivery wakes it, and the comment it tells of — also on the
// forge, so the poll it triggers sees it too — is delivered once.
func TestRunTakesWebhooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	schemas := webhookSchemas(t)
	secret, err := credential.Parse(webhookSecret)
	must(t, err)
	w, err := New(Config{Store: e.st, Forges: ForgesFunc(func(context.Context, kanban.PullRequest) (forge.Forge, error) { return e.client, nil }),
		Sink: e.sink, Backend: "runner", Interval: time.Hour})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the first poll", func() bool { return e.record().Watch.LastPolledAt != nil })
	polled := len(e.gh.Requests())

	at := time.Now().UTC().Truncate(time.Second)
	c := e.gh.AddReviewComment(owner, repoName, e.pr.Number, forgetest.ReviewComment{User: "bob", Body: "Add a test.", Path: "a.go", Line: 2,
		Side: "RIGHT", CommitID: sha1, CreatedAt: at})
	body := delivery(t, schemas, "pull-request-review-comment-created", map[string]any{"number": e.pr.Number, "pull_request.number": e.pr.Number,
		"pull_request.head.sha": sha1, "comment.id": c.ID, "comment.body": c.Body, "comment.path": c.Path, "comment.line": 2, "comment.side": "RIGHT",
		"comment.commit_id": sha1, "comment.created_at": at.Format(time.RFC3339), "comment.updated_at": at.Format(time.RFC3339), "comment.user.login": "bob"})
	if got := post(w.Webhook(Static(secret)), "pull_request_review_comment", body, forgetest.Sign(webhookSecret, body)); got != http.StatusAccepted {
		t.Fatalf("delivery: %d", got)
	}
	waitFor(t, "the comment event", func() bool { return len(e.sink.of(ReviewCommented)) > 0 })
	waitFor(t, "the poll the delivery triggered", func() bool { return len(e.gh.Requests()) > polled && e.record().Watch.LastCommentID == c.ID })
	time.Sleep(300 * time.Millisecond) // anything more would be delivered by now
	if got := e.sink.of(ReviewCommented); len(got) != 1 || got[0].Comment.ID != c.ID {
		t.Fatalf("comment events %+v, want one", got)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
