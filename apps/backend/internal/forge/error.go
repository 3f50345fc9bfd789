package forge

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v93/github"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// Error is a forge call's refusal or failure. Error() is safe to show any
// caller: it names what failed and why in the forge's terms, never the
// token, the forge's response text or caller text. Detail is for the
// server's log (method, path, status, the forge's error codes).
type Error struct {
	Safe *kanban.Error
	// Status is the forge's HTTP status (0 when it was not reached).
	Status int
	// RetryAfter, for a rate limit, is how long to wait before calling
	// again.
	RetryAfter time.Duration
	detail     string
}

func (e *Error) Error() string { return e.Safe.Error() }

// Unwrap returns the *kanban.Error, so kanban.ErrorCode(err) is its code.
func (e *Error) Unwrap() error { return e.Safe }

// Detail returns what the server's log should keep.
func (e *Error) Detail() string { return e.detail }

func newError(code kanban.Code, msg string) *Error {
	return &Error{Safe: &kanban.Error{Code: code, Message: msg}}
}

func invalid(field, msg string) *Error {
	return &Error{Safe: &kanban.Error{Code: kanban.CodeValidation, Field: field, Message: field + ": " + msg}}
}

// mapError turns a go-github error into an *Error. what names the object
// ("the pull request", "the commit's checks") for NOT_FOUND.
func mapError(what string, err error, r *redact.Redactor) error {
	if err == nil {
		return nil
	}
	var (
		rate   *github.RateLimitError
		abuse  *github.AbuseRateLimitError
		resp   *github.ErrorResponse
		e      *Error
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
	case errors.As(err, &rate):
		wait := max(time.Until(rate.Rate.Reset.Time), time.Second)
		out := newError(kanban.CodeUnavailable, "the forge's API rate limit is spent; retry in "+seconds(wait))
		out.Status, out.RetryAfter = statusOf(rate.Response), wait
		return withDetail(out, err, r)
	case errors.As(err, &abuse):
		wait := time.Minute
		if abuse.RetryAfter != nil && *abuse.RetryAfter > 0 {
			wait = *abuse.RetryAfter
		}
		out := newError(kanban.CodeUnavailable, "the forge asked to slow down (secondary rate limit); retry in "+seconds(wait))
		out.Status, out.RetryAfter = statusOf(abuse.Response), wait
		return withDetail(out, err, r)
	case errors.As(err, &syntax) || errors.As(err, &typ):
		return withDetail(newError(kanban.CodeInternal, "the forge's answer could not be read"), err, r)
	case errors.As(err, &resp) && resp.Response != nil:
		out := statusError(what, resp)
		out.Status = resp.Response.StatusCode
		out.detail = responseDetail(resp)
		return out
	}
	return withDetail(newError(kanban.CodeUnavailable, "the forge could not be reached"), err, r)
}

// statusError maps an HTTP error answer by status and, for 422, by the
// forge's documented error codes (never its message text).
func statusError(what string, resp *github.ErrorResponse) *Error {
	switch s := resp.Response.StatusCode; {
	case s == http.StatusUnauthorized:
		return newError(kanban.CodeUnauthorized, "the forge refused the server's token")
	case s == http.StatusForbidden:
		return newError(kanban.CodeForbidden, "the server's token may not do this on this repository")
	case s == http.StatusNotFound:
		return newError(kanban.CodeNotFound, what+" was not found on the forge (or the token cannot see it)")
	case s == http.StatusMethodNotAllowed:
		return newError(kanban.CodeConflict, "the pull request cannot be merged now (not mergeable: a draft, conflicts, failing checks, missing reviews or branch protection)")
	case s == http.StatusConflict:
		return newError(kanban.CodeConflict, "the pull request's head moved since it was read; read it again")
	case s == http.StatusUnprocessableEntity:
		for _, fe := range resp.Errors {
			switch {
			case fe.Code == "already_exists" || fe.Code == "custom" && strings.Contains(fe.Message, "already exists"):
				return newError(kanban.CodeConflict, "a pull request for this branch is already open")
			case (fe.Field == "head" || fe.Field == "base") && fe.Code == "invalid":
				return invalid(fe.Field, "the forge has no such branch in this repository")
			}
		}
		return newError(kanban.CodeValidation, "the forge refused the request as invalid")
	case s >= 500:
		return newError(kanban.CodeUnavailable, "the forge failed (HTTP "+strconv.Itoa(s)+"); retry later")
	}
	return newError(kanban.CodeInternal, "the forge answered HTTP "+strconv.Itoa(resp.Response.StatusCode))
}

// responseDetail names the request and the forge's error codes.
func responseDetail(resp *github.ErrorResponse) string {
	var b strings.Builder
	if req := resp.Response.Request; req != nil {
		b.WriteString(req.Method + " " + req.URL.Path + ": ")
	}
	b.WriteString(strconv.Itoa(resp.Response.StatusCode))
	for _, fe := range resp.Errors {
		b.WriteString(" [" + fe.Resource + " " + fe.Field + " " + fe.Code + "]")
	}
	return b.String()
}

func withDetail(e *Error, err error, r *redact.Redactor) *Error {
	e.detail = r.String(err.Error())
	return e
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

func seconds(d time.Duration) string {
	return strconv.Itoa(int((d+time.Second-1)/time.Second)) + " s"
}

// Backoff is the watcher's delay between calls to a forge after
// failures: exponential from Base (default 5 s) to Max (default 15 min)
// with jitter (each delay is between half and all of the step), and never
// less than a rate limit's RetryAfter (which may exceed Max).
type Backoff struct {
	Base, Max time.Duration
}

// Next returns the delay after the given number of consecutive failures
// (1 for the first), the last being err.
func (b Backoff) Next(failures int, err error) time.Duration {
	base, maxD := b.Base, b.Max
	if base <= 0 {
		base = 5 * time.Second
	}
	if maxD < base {
		maxD = max(base, 15*time.Minute)
	}
	d := base
	for i := 1; i < failures && d < maxD; i++ {
		d *= 2
	}
	d = min(d, maxD)
	d = d/2 + rand.N(d/2+1) // #nosec G404 -- jitter, not security
	var fe *Error
	if errors.As(err, &fe) && fe.RetryAfter > 0 {
		d = max(d, fe.RetryAfter+rand.N(fe.RetryAfter/10+1)) // #nosec G404
	}
	return d
}
