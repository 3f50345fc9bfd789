package store

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ListWorkspacePullRequests lists the pull requests of a workspace's tasks
// that are not archived, in the order they were linked: what the board
// needs for the badges of its cards, in one listing. NOT_FOUND when the
// workspace is missing.
func (s *Store) ListWorkspacePullRequests(ctx context.Context, workspaceID string, p kanban.Page) (*kanban.List[kanban.PullRequest], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if _, err := getWorkspace(ctx, s.stmts, workspaceID); err != nil {
		return nil, err
	}
	return prListing.page(ctx, s.stmts, p,
		`task_id IN (SELECT id FROM tasks WHERE workspace_id = ? AND archived_at IS NULL)`, workspaceID)
}
