package forge

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestErrorsAreSafe(t *testing.T) {
	gh, _ := mockGitHub(t)
	const wrong = "ghp_WrongT0kenWrongT0kenWrongT0ken000000"
	bad, err := NewGitHub(GitHubConfig{APIURL: gh.URL, Token: mustToken(t, wrong)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.PR(t.Context(), repo, 1)
	e := wantCode(t, err, kanban.CodeUnauthorized)
	if strings.Contains(err.Error(), wrong) || strings.Contains(e.Detail(), wrong) || e.Status != http.StatusUnauthorized {
		t.Fatalf("got %v (detail %q, status %d)", err, e.Detail(), e.Status)
	}
	for _, r := range gh.Requests() {
		if r.Status != http.StatusUnauthorized {
			t.Fatalf("request %+v: want 401", r)
		}
	}

	// Nobody listening: the transport error is mapped, its text kept for
	// the log only.
	down, err := NewGitHub(GitHubConfig{APIURL: "http://127.0.0.1:1/", Token: mustToken(t, apiToken), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = down.PR(t.Context(), repo, 1)
	e = wantCode(t, err, kanban.CodeUnavailable)
	if !strings.Contains(e.Detail(), "connection refused") {
		t.Fatalf("detail %q: want the transport's reason for the log", e.Detail())
	}
}

func TestRateLimits(t *testing.T) {
	gh, c := mockGitHub(t)
	reset := time.Now().Add(90 * time.Second)
	gh.LimitNext(forgetest.RateLimit{Reset: reset})
	_, err := c.PR(t.Context(), repo, 1)
	e := wantCode(t, err, kanban.CodeUnavailable)
	if e.RetryAfter < 80*time.Second || e.RetryAfter > 95*time.Second {
		t.Fatalf("primary limit: RetryAfter %s, want about 90s", e.RetryAfter)
	}
	// Until the reset, the client answers from what it knows: no request
	// is spent on a limit that is known to be exhausted.
	before := len(gh.Requests())
	_, err = c.Checks(t.Context(), repo, sha1)
	if e := wantCode(t, err, kanban.CodeUnavailable); e.RetryAfter <= 0 {
		t.Fatalf("second call during the limit: %v, RetryAfter %s", err, e.RetryAfter)
	}
	if n := len(gh.Requests()); n != before {
		t.Fatalf("a call during a known rate limit reached the forge (%d requests, want %d)", n, before)
	}
	if d := (Backoff{Base: time.Second, Max: 10 * time.Second}).Next(1, err); d < 80*time.Second {
		t.Fatalf("backoff after a rate limit: %s, want at least the RetryAfter", d)
	}

	gh2, c2 := mockGitHub(t) // a fresh client: the first one knows its limit is spent
	gh2.LimitNext(forgetest.RateLimit{Secondary: true, RetryAfter: 7 * time.Second})
	_, err = c2.PR(t.Context(), repo, 1)
	if e := wantCode(t, err, kanban.CodeUnavailable); e.RetryAfter != 7*time.Second {
		t.Fatalf("secondary limit: RetryAfter %s, want 7s", e.RetryAfter)
	}
}

// Input the forge must not see is refused before any request.
func TestInputRefused(t *testing.T) {
	gh, c := mockGitHub(t)
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"owner with ..":   func() error { _, err := c.PR(ctx, Repo{Owner: "..", Name: "r"}, 1); return err },
		"owner with /":    func() error { _, err := c.PR(ctx, Repo{Owner: "a/b", Name: "r"}, 1); return err },
		"name with /":     func() error { _, err := c.PR(ctx, Repo{Owner: "o", Name: "r/../../x"}, 1); return err },
		"name ..":         func() error { _, err := c.PR(ctx, Repo{Owner: "o", Name: ".."}, 1); return err },
		"name with ?":     func() error { _, err := c.PR(ctx, Repo{Owner: "o", Name: "r?x=1"}, 1); return err },
		"owner leading -": func() error { _, err := c.PR(ctx, Repo{Owner: "-o", Name: "r"}, 1); return err },
		"number 0":        func() error { _, err := c.PR(ctx, repo, 0); return err },
		"short sha":       func() error { _, err := c.Checks(ctx, repo, "abc"); return err },
		"sha with ../":    func() error { _, err := c.Checks(ctx, repo, "../../../../x"+strings.Repeat("a", 28)); return err },
		"check id 0":      func() error { _, err := c.CheckLog(ctx, repo, 0); return err },
		"empty title":     func() error { _, err := c.OpenPR(ctx, repo, NewPR{Title: " ", Head: "h", Base: "main"}); return err },
		"title newline":   func() error { _, err := c.OpenPR(ctx, repo, NewPR{Title: "a\nb", Head: "h", Base: "main"}); return err },
		"head option":     func() error { _, err := c.OpenPR(ctx, repo, NewPR{Title: "t", Head: "-h", Base: "main"}); return err },
		"base with space": func() error { _, err := c.OpenPR(ctx, repo, NewPR{Title: "t", Head: "h", Base: "ma in"}); return err },
		"body too long": func() error {
			_, err := c.OpenPR(ctx, repo, NewPR{Title: "t", Head: "h", Base: "main", Body: strings.Repeat("b", 65537)})
			return err
		},
		"bad merge method": func() error { _, err := c.Merge(ctx, repo, 1, MergeRequest{Method: "fast-forward"}); return err },
		"bad expected sha": func() error {
			_, err := c.Merge(ctx, repo, 1, MergeRequest{Method: MergeSquash, ExpectedHeadSHA: "HEAD"})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) { wantCode(t, call(), kanban.CodeValidation) })
	}
	if n := len(gh.Requests()); n != 0 {
		t.Fatalf("refused input sent %d requests", n)
	}
}

// The mock is not a rubber stamp: a request GitHub's description does not
// allow is caught and would fail the test.
func TestMockCatchesInvalidRequests(t *testing.T) {
	gh, _ := mockGitHub(t)
	send := func(method, path, body string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, gh.URL+path, bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+apiToken)
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct{ method, path, body, want string }{
		{"POST", "repos/o/r/pulls", `{"title":"no head or base"}`, "head"},
		{"PUT", "repos/o/r/pulls/1/merge", `{"merge_method":"fast-forward"}`, "merge_method"},
		{"GET", "repos/o/r/pulls/1/comments?since=yesterday", "", "since"},
		{"GET", "repos/o/r/pulls/not-a-number", "", "pull_number"},
		{"GET", "repos/o/r/no-such-endpoint", "", "no such endpoint"},
	} {
		if status := send(tc.method, tc.path, tc.body); status < 400 {
			t.Fatalf("%s %s: got %d, want a refusal", tc.method, tc.path, status)
		}
		v := gh.TakeViolations()
		if len(v) != 1 || !strings.Contains(v[0], tc.want) {
			t.Fatalf("%s %s: got violations %q, want one naming %q", tc.method, tc.path, v, tc.want)
		}
	}
	// A wrong media type is a violation too (GitHub serves JSON only).
	req, _ := http.NewRequestWithContext(t.Context(), "GET", gh.URL+"repos/o/r/pulls/1", nil)
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("Accept", "text/html")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
	}
	if v := gh.TakeViolations(); len(v) != 1 || !strings.Contains(v[0], "Accept") {
		t.Fatalf("got violations %q, want the Accept header", v)
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Base: time.Second, Max: 16 * time.Second}
	plain := errors.New("boom")
	for failures, bounds := range map[int][2]time.Duration{1: {500 * time.Millisecond, time.Second}, 3: {2 * time.Second, 4 * time.Second}, 10: {8 * time.Second, 16 * time.Second}} {
		for range 50 {
			if d := b.Next(failures, plain); d < bounds[0] || d > bounds[1] {
				t.Fatalf("failures %d: %s outside %v", failures, d, bounds)
			}
		}
	}
	limited := &Error{Safe: &kanban.Error{Code: kanban.CodeUnavailable}, RetryAfter: time.Hour}
	if d := b.Next(1, limited); d < time.Hour || d > time.Hour+6*time.Minute+time.Second {
		t.Fatalf("rate limited: %s, want the hour (plus jitter), beyond Max", d)
	}
	if d := (Backoff{}).Next(1, plain); d <= 0 || d > 5*time.Second {
		t.Fatalf("defaults: %s", d)
	}
}

func TestGitHubConfig(t *testing.T) {
	tok := mustToken(t, apiToken)
	for _, u := range []string{"http://api.github.com/", "ftp://x/", "https://user:" + apiToken + "@ghe.example/api/v3/", "https://ghe.example/api/v3/?x=1", "not a url", "https://"} {
		_, err := NewGitHub(GitHubConfig{APIURL: u, Token: tok})
		if err == nil || strings.Contains(err.Error(), apiToken) || strings.Contains(err.Error(), "ghe.example") {
			t.Fatalf("api url %q: got %v, want a refusal naming neither the URL nor the token", u, err)
		}
	}
	if _, err := NewGitHub(GitHubConfig{}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("no token: got %v", err)
	}
	for _, u := range []string{"", DefaultGitHubAPI, "https://ghe.example/api/v3", "http://127.0.0.1:8080/", "http://[::1]:1/"} {
		if _, err := NewGitHub(GitHubConfig{APIURL: u, Token: tok}); err != nil {
			t.Fatalf("api url %q refused: %v", u, err)
		}
	}
}
