//go:build !unix

package fsguard

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ReadFile refuses every read where the bounded, confined open it needs
// (openat with O_NOFOLLOW and O_NONBLOCK, fstat's link count) is missing.
func (p *Policy) ReadFile(_ context.Context, _ Dir, rel, field string, _ int64) (*File, error) {
	if _, err := relPath(rel, field); err != nil {
		return nil, err
	}
	return nil, kanban.FieldError(field, "cannot be read on this operating system")
}
