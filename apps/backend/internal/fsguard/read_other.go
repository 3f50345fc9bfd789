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

// Listing is one page of a directory's entries (see the unix build).
type Listing struct {
	Entries []Entry
	More    bool
	Partial bool
}

// Entry is one entry of a directory (see the unix build).
type Entry struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Size int64  `json:"size"`
}

// ListDir refuses every listing where the confined open it needs is
// missing.
func (p *Policy) ListDir(_ context.Context, _ Dir, rel, field, _ string, _ int) (*Listing, error) {
	if _, err := relDir(rel, field); err != nil {
		return nil, err
	}
	return nil, kanban.FieldError(field, "cannot be read on this operating system")
}
