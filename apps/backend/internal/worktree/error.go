package worktree

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// maxDetail bounds the git output an Error keeps for the log.
const maxDetail = 4 << 10

// Error is a refusal or a failure of a worktree operation. Error() is safe
// to show any caller: it names the operation and the rule, never a path,
// a branch, a message, a URL or a token. Detail is for the server's log:
// git's own output, redacted and bounded. errors.As finds the
// *kanban.Error inside, so every transport maps Code as usual.
type Error struct {
	Safe   *kanban.Error
	detail string
}

func (e *Error) Error() string { return e.Safe.Error() }

// Unwrap returns the *kanban.Error, so kanban.ErrorCode(err) is Code.
func (e *Error) Unwrap() error { return e.Safe }

// Detail returns git's redacted, bounded output (empty for refusals
// decided before git ran). It may name paths: log it, do not show it.
func (e *Error) Detail() string { return e.detail }

func refuse(code kanban.Code, msg string) *Error {
	return &Error{Safe: &kanban.Error{Code: code, Message: msg}}
}

func invalid(field, msg string) *Error {
	return &Error{Safe: &kanban.Error{Code: kanban.CodeValidation, Field: field, Message: field + ": " + msg}}
}

func failed(code kanban.Code, msg, detail string) *Error {
	if len(detail) > maxDetail {
		detail = detail[:maxDetail] + "…"
	}
	return &Error{Safe: &kanban.Error{Code: code, Message: msg}, detail: detail}
}
