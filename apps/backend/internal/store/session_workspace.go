package store

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ListWorkspaceSessions lists a workspace's sessions, newest first
// (NOT_FOUND for an unknown workspace).
func (s *Store) ListWorkspaceSessions(ctx context.Context, workspaceID string, p kanban.Page) (*kanban.List[kanban.Session], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if _, err := getWorkspace(ctx, s.stmts, workspaceID); err != nil {
		return nil, err
	}
	return workspaceSessionListing.page(ctx, s.stmts, p, `workspace_id = ?`, workspaceID)
}

var workspaceSessionListing = listing[kanban.Session]{what: "list workspace sessions",
	selectFrom: sessionListing.selectFrom, scan: scanSession,
	cols: sessionListing.cols, desc: true, key: sessionListing.key}
