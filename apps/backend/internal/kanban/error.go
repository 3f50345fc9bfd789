package kanban

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Code is a stable, machine-readable error class shared by every transport.
type Code string

// Error codes. They appear verbatim in WebSocket error payloads and in MCP
// tool error texts.
const (
	CodeBadRequest    Code = "BAD_REQUEST"
	CodeValidation    Code = "VALIDATION_ERROR"
	CodeNotFound      Code = "NOT_FOUND"
	CodeConflict      Code = "CONFLICT"
	CodeUnauthorized  Code = "UNAUTHORIZED"
	CodeForbidden     Code = "FORBIDDEN"
	CodeUnknownAction Code = "UNKNOWN_ACTION"
	CodeUnavailable   Code = "UNAVAILABLE"
	// CodeRateLimited is retryable: the caller's token or session spent
	// its rate; RetryAfter says when to try again.
	CodeRateLimited Code = "RATE_LIMITED"
	// CodeBudgetExceeded: a budget covering the session is spent; no new
	// turn starts until its limit is raised.
	CodeBudgetExceeded Code = "BUDGET_EXCEEDED"
	CodeInternal       Code = "INTERNAL_ERROR"
)

// Error is a domain error whose Message is safe to show to any caller: it
// names fields and rules, never caller-supplied values.
type Error struct {
	Code    Code
	Message string
	// Field optionally names the offending field (a declared name, never a
	// caller-chosen key).
	Field string
	// RetryAfter, for CodeRateLimited, is how many whole seconds to wait
	// before retrying (at least 1).
	RetryAfter int
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf builds an *Error. Callers must not format caller-supplied values into it.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldError builds a VALIDATION_ERROR naming field.
func FieldError(field, format string, args ...any) *Error {
	return &Error{Code: CodeValidation, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// RateLimited builds a RATE_LIMITED error for a caller (what: "calls",
// "writes") that may retry after wait.
func RateLimited(what string, wait time.Duration) *Error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return &Error{Code: CodeRateLimited, RetryAfter: secs,
		Message: fmt.Sprintf("rate limit of %s reached for this caller; retry in %d s", what, secs)}
}

// NotFound builds a NOT_FOUND error for an entity kind ("task", "workflow").
func NotFound(kind string) *Error { return Errorf(CodeNotFound, "%s not found", kind) }

// ErrorCode returns the code of err, or CodeInternal for errors that are not
// *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// AsError returns err's *Error, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
