package forge

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const webhookSecret = "whsec_0123456789abcdef0123456789abcdef"

// webhookSchemas gives GitHub's webhook schemas (@octokit/openapi-
// webhooks). Payloads are made from them: the smallest payload a schema
// allows, with the test's values laid over, or GitHub's own example; each
// is validated against its schema before it is fed to the parser, so the
// parser is tested on payloads GitHub documents.
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

// payload builds a webhook's payload: Minimal(name) with values set at
// dotted paths ("pull_request.head.sha").
func payload(t *testing.T, w *forgetest.Webhooks, name string, values map[string]any) []byte {
	t.Helper()
	m, err := w.Minimal(name)
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Check(name, body); err != nil {
		t.Fatalf("the test's %s payload is not one GitHub documents: %v", name, err)
	}
	return body
}

// withRepo is kv with the test repository's fields.
func withRepo(kv map[string]any) map[string]any {
	out := map[string]any{"repository.name": "demo.app", "repository.owner.login": "octo-org"}
	for k, v := range kv {
		out[k] = v
	}
	return out
}

// prHook is the fields of a pull_request delivery about #7 at sha1, with kv.
func prHook(merged bool, kv map[string]any) map[string]any {
	return withRepo(mergeMaps(map[string]any{"number": 7, "pull_request.number": 7, "pull_request.merged": merged, "pull_request.head.sha": sha1}, kv))
}

// failedCheckRun checks that the schemas check something (a bare payload
// fails, GitHub's own example passes) and returns GitHub's example of a
// completed check run, turned into a failed one.
func failedCheckRun(t *testing.T, w *forgetest.Webhooks) string {
	t.Helper()
	if err := w.Check("pull-request-opened", []byte(`{"action":"opened","number":7}`)); err == nil {
		t.Fatal("a payload without pull_request, repository and sender passed the schema: the check checks nothing")
	}
	example, err := w.Example("check-run-completed")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Check("check-run-completed", example); err != nil {
		t.Fatalf("GitHub's own example fails its schema: %v", err)
	}
	failedRun := strings.Replace(string(example), `"conclusion": "success"`, `"conclusion": "failure"`, 1)
	failedRun = strings.Replace(failedRun, `"conclusion":"success"`, `"conclusion":"failure"`, 1)
	if err := w.Check("check-run-completed", []byte(failedRun)); err != nil || !strings.Contains(failedRun, "failure") {
		t.Fatalf("the failed check run: %v", err)
	}
	return failedRun
}

// checkGitHubIgnoredDeliveries: deliveries the watcher does not act on
// give nothing, and payloads that are not the event's JSON are refused
// echoing nothing.
func checkGitHubIgnoredDeliveries(t *testing.T) {
	t.Helper()
	for _, tc := range []struct{ event, body string }{
		{"ping", `{"zen":"x"}`}, {"push", `{}`}, {"pull_request", `{"action":"labeled","repository":{"name":"h","owner":{"login":"c"}}}`},
		{"check_run", `{"action":"created","repository":{"name":"h","owner":{"login":"c"}}}`},
	} {
		if ev, err := ParseGitHubEvent(tc.event, []byte(tc.body)); ev != nil || err != nil {
			t.Fatalf("%s %s: got %+v, %v; want nothing", tc.event, tc.body, ev, err)
		}
	}
	for _, body := range []string{`not json`, `{"action":"opened","repository":{"name":"../x","owner":{"login":"c"}}}`, `[]`} {
		_, err := ParseGitHubEvent("pull_request", []byte(body))
		if kanban.ErrorCode(err) != kanban.CodeValidation || strings.Contains(err.Error(), "../x") {
			t.Fatalf("%s: got %v, want a validation error that echoes nothing", body, err)
		}
	}
}

func TestWebhookEvents(t *testing.T) {
	w := webhookSchemas(t)
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Format(time.RFC3339)
	atT, _ := time.Parse(time.RFC3339, at)
	failedRun := failedCheckRun(t, w)

	for _, tc := range []struct {
		schema, event string
		body          []byte
		want          *Event
	}{
		{"pull-request-opened", "pull_request", payload(t, w, "pull-request-opened", prHook(false, nil)),
			&Event{Kind: EventPROpened, PRs: []int{7}, HeadSHA: sha1}},
		{"pull-request-closed", "pull_request", payload(t, w, "pull-request-closed", prHook(true, map[string]any{"pull_request.merged_at": at})),
			&Event{Kind: EventPRMerged, PRs: []int{7}, HeadSHA: sha1}},
		{"pull-request-closed", "pull_request", payload(t, w, "pull-request-closed", prHook(false, nil)),
			&Event{Kind: EventPRClosed, PRs: []int{7}, HeadSHA: sha1}},
		{"pull-request-synchronize", "pull_request", payload(t, w, "pull-request-synchronize", prHook(false, map[string]any{"before": sha2, "after": sha1})),
			&Event{Kind: EventPRSynchronized, PRs: []int{7}, HeadSHA: sha1}},
		{"pull-request-review-requested", "pull_request", payload(t, w, "pull-request-review-requested", prHook(false, nil)),
			&Event{Kind: EventReviewRequested, PRs: []int{7}, HeadSHA: sha1}},
		{"pull-request-review-submitted", "pull_request_review", payload(t, w, "pull-request-review-submitted", prHook(false, map[string]any{
			"review.id": 3, "review.state": "changes_requested", "review.body": "please rename", "review.commit_id": sha1,
			"review.submitted_at": at, "review.user.login": "alice"})),
			&Event{Kind: EventReviewSubmitted, PRs: []int{7}, HeadSHA: sha1,
				Review: &Review{ID: 3, Author: "alice", State: ReviewChangesRequested, Body: "please rename", CommitSHA: sha1, SubmittedAt: atT}}},
		{"pull-request-review-comment-created", "pull_request_review_comment", payload(t, w, "pull-request-review-comment-created", prHook(false, map[string]any{
			"comment.id": 9, "comment.pull_request_review_id": 3, "comment.body": "rename this", "comment.path": "src/login.go",
			"comment.line": 12, "comment.start_line": 10, "comment.side": "RIGHT", "comment.commit_id": sha1, "comment.created_at": at,
			"comment.updated_at": at, "comment.html_url": "https://github.com/octo-org/demo.app/pull/7#r9", "comment.user.login": "bob"})),
			&Event{Kind: EventReviewComment, PRs: []int{7}, HeadSHA: sha1,
				Comment: &ReviewComment{ID: 9, ReviewID: 3, Author: "bob", Body: "rename this", Path: "src/login.go", Line: 12, StartLine: 10, Side: "RIGHT",
					CommitSHA: sha1, CreatedAt: atT, UpdatedAt: atT, URL: "https://github.com/octo-org/demo.app/pull/7#r9"}}},
		{"check-run-completed", "check_run", []byte(failedRun),
			&Event{Kind: EventCheckCompleted, Repo: Repo{Owner: "Codertocat", Name: "Hello-World"}, PRs: []int{2}, HeadSHA: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
				Check: &FailedCheck{ID: 128620228, Name: "Octocoders-linter", Kind: "check_run", Conclusion: "failure", URL: "https://octocoders.github.io"}}},
		{"status", "status", payload(t, w, "status", withRepo(map[string]any{"sha": sha1, "context": "ci/legacy", "state": "failure",
			"description": "2 tests failed", "target_url": "https://ci.example/1"})),
			&Event{Kind: EventStatus, HeadSHA: sha1, Check: &FailedCheck{Name: "ci/legacy", Kind: "status", Conclusion: "failure", Summary: "2 tests failed", URL: "https://ci.example/1"}}},
	} {
		t.Run(tc.schema+"/"+string(tc.want.Kind), func(t *testing.T) {
			if err := w.Check(tc.schema, tc.body); err != nil {
				t.Fatal(err)
			}
			if err := VerifyGitHubSignature(mustToken(t, webhookSecret), tc.body, forgetest.Sign(webhookSecret, tc.body)); err != nil {
				t.Fatal(err)
			}
			got, err := ParseGitHubEvent(tc.event, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want.Repo == (Repo{}) {
				tc.want.Repo = repo
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("event (-want +got):\n%s", diff)
			}
		})
	}

	checkGitHubIgnoredDeliveries(t)
}

func mergeMaps(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func TestWebhookSignature(t *testing.T) {
	body := []byte(`{"action":"opened"}`)
	secret := mustToken(t, webhookSecret)
	good := forgetest.Sign(webhookSecret, body)
	if err := VerifyGitHubSignature(secret, body, good); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		body   []byte
		header string
	}{
		"missing":        {body, ""},
		"sha1 only":      {body, "sha1=" + strings.Repeat("a", 40)},
		"not hex":        {body, "sha256=" + strings.Repeat("z", 64)},
		"short":          {body, good[:40]},
		"other secret":   {body, forgetest.Sign("whsec_other_secret_000000000000", body)},
		"body altered":   {[]byte(`{"action":"closed"}`), good},
		"signature case": {body, "SHA256=" + strings.TrimPrefix(good, "sha256=")},
	} {
		err := VerifyGitHubSignature(secret, tc.body, tc.header)
		if kanban.ErrorCode(err) != kanban.CodeUnauthorized {
			t.Fatalf("%s: got %v, want UNAUTHORIZED", name, err)
		}
		if tc.header != "" && strings.Contains(err.Error(), tc.header) || strings.Contains(err.Error(), webhookSecret) {
			t.Fatalf("%s: error %q echoes the header or the secret", name, err)
		}
	}
	if err := VerifyGitHubSignature(mustToken(t, "x"), body, good); kanban.ErrorCode(err) != kanban.CodeUnauthorized {
		t.Fatalf("wrong secret: got %v", err)
	}
	if err := VerifyGitHubSignature(credential.Token{}, body, good); kanban.ErrorCode(err) != kanban.CodeUnavailable {
		t.Fatalf("no secret configured: got %v, want UNAVAILABLE", err)
	}
}
