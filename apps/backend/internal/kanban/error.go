package kanban

import (
	"errors"
	"fmt"
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
	CodeInternal      Code = "INTERNAL_ERROR"
)

// Error is a domain error whose Message is safe to show to any caller: it
// names fields and rules, never caller-supplied values.
type Error struct {
	Code    Code
	Message string
	// Field optionally names the offending field (a declared name, never a
	// caller-chosen key).
	Field string
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
