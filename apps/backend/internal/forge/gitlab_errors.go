package forge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// GitLab's rate-limit headers (docs.gitlab.com/user/gitlab_com/#rate-limits-on-gitlabcom,
// docs.gitlab.com/security/rate_limits/): RateLimit-Remaining is what is
// left of the window, RateLimit-Reset its end (Unix seconds); a refused
// request is 429 with Retry-After (seconds).
const (
	headerRateRemaining = "RateLimit-Remaining"
	headerRateReset     = "RateLimit-Reset"
	headerRetryAfter    = "Retry-After"
	// defaultRateWait is how long a 429 without either header pauses.
	defaultRateWait = time.Minute
	// maxRateWait bounds a wait a server asks for.
	maxRateWait = time.Hour
)

// gitlabLimits is the GitLab client's transport: it remembers a spent
// rate limit (a 429, or a response saying nothing remains) and refuses
// calls until it ends, so no request is spent on a limit known to be
// exhausted (as go-github does for GitHub).
type gitlabLimits struct {
	next http.RoundTripper

	mu    sync.Mutex
	until time.Time
}

func (l *gitlabLimits) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	until := l.until
	l.mu.Unlock()
	if wait := time.Until(until); wait > 0 {
		return nil, rateError(wait, 0)
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if wait, ok := rateWait(resp); ok {
		l.mu.Lock()
		if t := time.Now().Add(wait); t.After(l.until) {
			l.until = t
		}
		l.mu.Unlock()
	}
	return resp, nil
}

// rateWait says how long a response asks the client to wait: a 429's
// Retry-After (or RateLimit-Reset, else a minute), or the rest of the
// window when RateLimit-Remaining is 0.
func rateWait(resp *http.Response) (time.Duration, bool) {
	h := resp.Header
	reset := func() (time.Duration, bool) {
		n, err := strconv.ParseInt(strings.TrimSpace(h.Get(headerRateReset)), 10, 64)
		if err != nil || n <= 0 {
			return 0, false
		}
		return time.Until(time.Unix(n, 0)), true
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		if s, err := strconv.Atoi(strings.TrimSpace(h.Get(headerRetryAfter))); err == nil && s >= 0 {
			return bounded(time.Duration(s) * time.Second), true
		}
		if t, err := http.ParseTime(h.Get(headerRetryAfter)); err == nil {
			return bounded(time.Until(t)), true
		}
		if d, ok := reset(); ok {
			return bounded(d), true
		}
		return defaultRateWait, true
	case resp.StatusCode < 400 && strings.TrimSpace(h.Get(headerRateRemaining)) == "0":
		if d, ok := reset(); ok && d > 0 {
			return bounded(d), true
		}
	}
	return 0, false
}

func bounded(d time.Duration) time.Duration { return min(max(d, time.Second), maxRateWait) }

func rateError(wait time.Duration, status int) *Error {
	e := newError(kanban.CodeUnavailable, "the forge's API rate limit is spent; retry in "+seconds(wait))
	e.Status, e.RetryAfter = status, wait
	e.detail = "rate limited for " + wait.String()
	return e
}

// whatProject names the object of a create (OpenPR) to mapGitLabError.
const whatProject = "the project"

// mapGitLabError turns a GitLab client error into an *Error. what names
// the object ("the merge request") for NOT_FOUND. GitLab's message text is
// read to tell refusals apart (never passed on).
func mapGitLabError(what string, err error, r *redact.Redactor) error {
	if err == nil {
		return nil
	}
	var (
		e      *Error
		resp   *gitlab.ErrorResponse
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, context.DeadlineExceeded):
		return withDetail(newError(kanban.CodeUnavailable, "the forge did not answer in time"), err, r)
	case errors.Is(err, context.Canceled):
		return withDetail(newError(kanban.CodeUnavailable, "the forge call was cancelled"), err, r)
	case errors.As(err, &resp):
		out := gitlabStatusError(what, resp)
		out.Status = resp.StatusCode
		out.detail = gitlabDetail(resp)
		return out
	case errors.As(err, &syntax) || errors.As(err, &typ):
		return withDetail(newError(kanban.CodeInternal, "the forge's answer could not be read"), err, r)
	}
	return withDetail(newError(kanban.CodeUnavailable, "the forge could not be reached"), err, r)
}

// gitlabStatusError maps an error answer by status and, where GitLab uses
// one status for several refusals, by what its message says
// (docs.gitlab.com/api/rest/troubleshooting/#status-codes,
// docs.gitlab.com/api/merge_requests/#merge-a-merge-request).
func gitlabStatusError(what string, resp *gitlab.ErrorResponse) *Error {
	msg := strings.ToLower(gitlabMessage(resp.Body))
	switch s := resp.StatusCode; {
	case s == http.StatusUnauthorized:
		return newError(kanban.CodeUnauthorized, "the forge refused the server's token")
	case s == http.StatusForbidden:
		return newError(kanban.CodeForbidden, "the server's token may not do this on this project")
	case s == http.StatusNotFound:
		return newError(kanban.CodeNotFound, what+" was not found on the forge (or the token cannot see it)")
	case s == http.StatusMethodNotAllowed:
		return newError(kanban.CodeConflict, "the merge request cannot be merged now (not mergeable: a draft, conflicts, a pipeline that must pass, missing approvals or unresolved threads)")
	case strings.Contains(msg, "sha does not match"):
		return newError(kanban.CodeConflict, "the merge request's head moved since it was read; read it again")
	case strings.Contains(msg, "already exists"):
		return newError(kanban.CodeConflict, "a merge request for this branch is already open")
	case strings.Contains(msg, "source branch") && strings.Contains(msg, "does not exist"):
		return invalid("head", "the forge has no such branch in this project")
	case strings.Contains(msg, "target branch") && strings.Contains(msg, "does not exist"):
		return invalid("base", "the forge has no such branch in this project")
	case s == http.StatusConflict && what == whatProject:
		// A create refused as conflicting: GitLab's message (which may be
		// translated) names the open merge request of the branch.
		return newError(kanban.CodeConflict, "a merge request for this branch is already open")
	case s == http.StatusConflict:
		return newError(kanban.CodeConflict, "the forge refused the change as conflicting with the merge request's state")
	case s == http.StatusUnprocessableEntity && strings.Contains(msg, "cannot be merged"):
		return newError(kanban.CodeConflict, "the forge could not merge the merge request (conflicts)")
	case s == http.StatusBadRequest || s == http.StatusUnprocessableEntity:
		return newError(kanban.CodeValidation, "the forge refused the request as invalid")
	case s == http.StatusTooManyRequests:
		wait := defaultRateWait
		if resp.Response != nil {
			wait, _ = rateWait(resp.Response)
		}
		return rateError(wait, s)
	case s >= 500:
		return newError(kanban.CodeUnavailable, "the forge failed (HTTP "+strconv.Itoa(s)+"); retry later")
	}
	return newError(kanban.CodeInternal, "the forge answered HTTP "+strconv.Itoa(resp.StatusCode))
}

// gitlabMessage flattens GitLab's error document ({"message": string,
// list or object of lists} or {"error": string}) to its words, for
// classifying only.
func gitlabMessage(body []byte) string {
	var doc struct {
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	if len(body) > 64<<10 || json.Unmarshal(body, &doc) != nil {
		return ""
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v + " ")
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for k, x := range v {
				b.WriteString(k + " ")
				walk(x)
			}
		}
	}
	walk(doc.Message)
	return b.String() + doc.Error
}

// gitlabDetail names the request and the status for the log (not
// GitLab's message, which may carry caller text).
func gitlabDetail(resp *gitlab.ErrorResponse) string {
	s := strconv.Itoa(resp.StatusCode)
	if resp.Response != nil && resp.Response.Request != nil {
		return resp.Response.Request.Method + " " + resp.Response.Request.URL.EscapedPath() + ": " + s
	}
	return s
}
