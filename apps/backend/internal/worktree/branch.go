package worktree

import (
	"errors"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// checkBranch refuses a branch name that is empty or that
// kanban.CheckBranch refuses (anything git would refuse or could read as
// an option, a revision range or a reflog selector). Its messages never
// echo the name.
func checkBranch(field, name string) error {
	if name == "" {
		return invalid(field, "is required")
	}
	if err := kanban.CheckBranch(field, name); err != nil {
		return asError(err)
	}
	return nil
}

// asError wraps kanban's refusal so every refusal of this package is an
// *Error.
func asError(err error) error {
	var ke *kanban.Error
	if errors.As(err, &ke) {
		return &Error{Safe: ke}
	}
	return err
}
