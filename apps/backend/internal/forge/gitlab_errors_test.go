package forge

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestGitLabErrorsAreSafe(t *testing.T) {
	gl, _ := mockGitLab(t)
	const wrong = "glpat-WrongT0kenWrongT0kenWrong00"
	bad := newGitLabClient(t, gl.URL, wrong)
	_, err := bad.PR(t.Context(), glRepo, 1)
	e := wantGitLabCode(t, err, kanban.CodeUnauthorized)
	if strings.Contains(err.Error(), wrong) || strings.Contains(e.Detail(), wrong) || e.Status != http.StatusUnauthorized {
		t.Fatalf("got %v (detail %q, status %d)", err, e.Detail(), e.Status)
	}
	if reqs := gl.Requests(); len(reqs) != 1 || reqs[0].Status != http.StatusUnauthorized {
		t.Fatalf("requests %+v: want one, refused 401 (no retries)", reqs)
	}

	// Nobody listening: the transport's reason is kept for the log only.
	down := newGitLabClient(t, "http://127.0.0.1:1/", glToken)
	_, err = down.Checks(t.Context(), glRepo, sha1)
	e = wantGitLabCode(t, err, kanban.CodeUnavailable)
	if !strings.Contains(e.Detail(), "connection refused") || strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("got %v, detail %q: want the transport's reason in the detail only", err, e.Detail())
	}
}

func TestGitLabRateLimits(t *testing.T) {
	gl, c := mockGitLab(t)
	gl.LimitNext(forgetest.GitLabLimit{RetryAfter: 90 * time.Second, Reset: time.Now().Add(time.Minute)})
	_, err := c.PR(t.Context(), glRepo, 1)
	e := wantGitLabCode(t, err, kanban.CodeUnavailable)
	if e.RetryAfter != 90*time.Second || e.Status != http.StatusTooManyRequests {
		t.Fatalf("429 with Retry-After: RetryAfter %s, status %d; want 90s (Retry-After wins over RateLimit-Reset)", e.RetryAfter, e.Status)
	}
	// Until then the client answers from what it knows: no request is
	// spent on a limit known to be spent.
	before := len(gl.Requests())
	_, err = c.Checks(t.Context(), glRepo, sha1)
	if e := wantGitLabCode(t, err, kanban.CodeUnavailable); e.RetryAfter < 80*time.Second {
		t.Fatalf("a call during the limit: %v, RetryAfter %s", err, e.RetryAfter)
	}
	if n := len(gl.Requests()); n != before {
		t.Fatalf("a call during a known rate limit reached the forge (%d requests, want %d)", n, before)
	}
	if d := (Backoff{Base: time.Second, Max: 10 * time.Second}).Next(1, err); d < 80*time.Second {
		t.Fatalf("backoff after a rate limit: %s, want at least the RetryAfter", d)
	}

	// Without Retry-After, RateLimit-Reset says when.
	gl2, c2 := mockGitLab(t)
	gl2.LimitNext(forgetest.GitLabLimit{Reset: time.Now().Add(45 * time.Second)})
	_, err = c2.PR(t.Context(), glRepo, 1)
	if e := wantGitLabCode(t, err, kanban.CodeUnavailable); e.RetryAfter < 40*time.Second || e.RetryAfter > 46*time.Second {
		t.Fatalf("429 with RateLimit-Reset only: RetryAfter %s, want about 45s", e.RetryAfter)
	}
}

// Input the forge must not see is refused before any request.
func TestGitLabInputRefused(t *testing.T) {
	gl, c := mockGitLab(t)
	ctx := t.Context()
	pr := func(r Repo) func() error { return func() error { _, err := c.PR(ctx, r, 1); return err } }
	for name, call := range map[string]func() error{
		"namespace ..":      pr(Repo{Owner: "..", Name: "r"}),
		"namespace with ..": pr(Repo{Owner: "a/../b", Name: "r"}),
		"empty segment":     pr(Repo{Owner: "a//b", Name: "r"}),
		"leading -":         pr(Repo{Owner: "-a", Name: "r"}),
		"leading .":         pr(Repo{Owner: "a/.b", Name: "r"}),
		"name with /":       pr(Repo{Owner: "o", Name: "r/../../x"}),
		"name with ?":       pr(Repo{Owner: "o", Name: "r?x=1"}),
		"name with %":       pr(Repo{Owner: "o", Name: "r%2Fx"}),
		"name ending in .":  pr(Repo{Owner: "o", Name: "r."}),
		"no namespace":      pr(Repo{Name: "r"}),
		"number 0":          func() error { _, err := c.PR(ctx, glRepo, 0); return err },
		"short sha":         func() error { _, err := c.Checks(ctx, glRepo, "abc"); return err },
		"job id 0":          func() error { _, err := c.CheckLog(ctx, glRepo, 0); return err },
		"empty title":       func() error { _, err := c.OpenPR(ctx, glRepo, NewPR{Title: " ", Head: "h", Base: "main"}); return err },
		"title with a newline": func() error {
			_, err := c.OpenPR(ctx, glRepo, NewPR{Title: "a\nb", Head: "h", Base: "main"})
			return err
		},
		"source branch option":  func() error { _, err := c.OpenPR(ctx, glRepo, NewPR{Title: "t", Head: "-h", Base: "main"}); return err },
		"target branch with ..": func() error { _, err := c.OpenPR(ctx, glRepo, NewPR{Title: "t", Head: "h", Base: "a..b"}); return err },
		"draft title too long": func() error {
			_, err := c.OpenPR(ctx, glRepo, NewPR{Title: strings.Repeat("t", 250), Head: "h", Base: "main", Draft: true})
			return err
		},
		"rebase": func() error { _, err := c.Merge(ctx, glRepo, 1, MergeRequest{Method: MergeRebase}); return err },
		"bad expected sha": func() error {
			_, err := c.Merge(ctx, glRepo, 1, MergeRequest{Method: MergeCommit, ExpectedHeadSHA: "HEAD"})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) { wantGitLabCode(t, call(), kanban.CodeValidation) })
	}
	if n := len(gl.Requests()); n != 0 {
		t.Fatalf("refused input sent %d requests", n)
	}
}

// The fixture is not a rubber stamp: a request GitLab's docs do not allow
// is caught, and would fail the test.
func TestGitLabFixtureCatchesInvalidRequests(t *testing.T) {
	gl, _ := mockGitLab(t)
	send := func(method, path, body string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, gl.URL+path, bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("PRIVATE-TOKEN", glToken)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	p := "api/v4/projects/octo-group%2Fplatform%2Fdemo.app/"
	for _, tc := range []struct{ method, path, body, want string }{
		{"POST", p + "merge_requests", `{"title":"t","target_branch":"main"}`, "source_branch is missing"},
		{"POST", p + "merge_requests", `{"title":"t","source_branch":"` + glBranch + `","target_branch":"main","draft":true}`, `unknown body field "draft"`},
		{"POST", p + "merge_requests", `{"title":7,"source_branch":"a","target_branch":"main"}`, "title is invalid"},
		{"PUT", p + "merge_requests/1/merge", `{"sha":5}`, "sha is invalid"},
		{"PUT", p + "merge_requests/1/merge", `{"merge_method":"squash"}`, `unknown body field "merge_method"`},
		{"GET", p + "merge_requests/1/notes?sort=up", "", "sort does not have a valid value"},
		{"GET", p + "merge_requests/1/notes?since=2026-01-01", "", `unknown query parameter "since"`},
		{"GET", p + "merge_requests/abc", "", "iid is invalid"},
		{"DELETE", p + "merge_requests/1/merge", "", "method not allowed"},
		{"GET", p + "merge_requests/1/reviews", "", "no such endpoint"},
		{"GET", "projects/x/merge_requests/1", "", "API root"},
		{"GET", p + "merge_requests/1?private_token=" + glToken, "", "token in the URL"},
		{"GET", p + "merge_requests/1/approvals", `{"x":1}`, "a body on an endpoint that takes none"},
	} {
		if status := send(tc.method, tc.path, tc.body); status < 400 {
			t.Fatalf("%s %s: got %d, want a refusal", tc.method, tc.path, status)
		}
		v := gl.TakeViolations()
		if len(v) != 1 || !strings.Contains(v[0], tc.want) {
			t.Fatalf("%s %s: got violations %q, want one naming %q", tc.method, tc.path, v, tc.want)
		}
	}
	// Without a token: 401 as GitLab answers, not a violation.
	req, _ := http.NewRequestWithContext(t.Context(), "GET", gl.URL+p+"merge_requests/1", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %v, %v", resp, err)
	} else {
		_ = resp.Body.Close()
	}
}

func TestGitLabConfig(t *testing.T) {
	tok := mustToken(t, glToken)
	for _, u := range []string{"http://gitlab.com/", "ftp://x/", "https://user:" + glToken + "@gitlab.example/", "https://gitlab.example/?x=1", "not a url", "https://"} {
		_, err := NewGitLab(GitLabConfig{URL: u, Token: tok})
		if err == nil || strings.Contains(err.Error(), glToken) || strings.Contains(err.Error(), "gitlab.example") {
			t.Fatalf("url %q: got %v, want a refusal naming neither the URL nor the token", u, err)
		}
	}
	if _, err := NewGitLab(GitLabConfig{}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("no token: got %v", err)
	}
	for _, u := range []string{"", DefaultGitLabURL, "https://gitlab.example/", "https://gitlab.example/api/v4/", "http://127.0.0.1:8080/", "http://[::1]:1/"} {
		if _, err := NewGitLab(GitLabConfig{URL: u, Token: tok}); err != nil {
			t.Fatalf("url %q refused: %v", u, err)
		}
	}
}
