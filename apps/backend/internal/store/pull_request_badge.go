package store

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ListPullRequestBadges lists the badges of the pull requests of a
// workspace's tasks that are not archived, by id: what the board draws
// on its cards, in one listing. NOT_FOUND
// when the workspace is missing.
func (s *Store) ListPullRequestBadges(ctx context.Context, workspaceID string, p kanban.Page) (*kanban.List[kanban.PullRequestBadge], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if _, err := getWorkspace(ctx, s.stmts, workspaceID); err != nil {
		return nil, err
	}
	return prBadgeListing.page(ctx, s.stmts, p,
		`task_id IN (SELECT id FROM tasks WHERE workspace_id = ? AND archived_at IS NULL)`, workspaceID)
}

// prBadgeListing pages by id (the badges' order does not matter; the
// cursor needs no more than a badge carries).
var prBadgeListing = listing[kanban.PullRequestBadge]{what: "list pull request badges",
	selectFrom: `SELECT id, task_id, number, state, checks, review, updated_at FROM task_pull_requests`,
	scan:       scanPRBadge, cols: []string{"id"},
	key: func(p kanban.PullRequestBadge) []any { return []any{p.ID} },
	// Its strings escaped at worst 6 bytes a byte; its enums, number and
	// time, and the keys, well under 256 bytes.
	bound: func(p kanban.PullRequestBadge) int { return 6*(len(p.ID)+len(p.TaskID)) + 256 }}

func scanPRBadge(r rowSource) (*kanban.PullRequestBadge, error) {
	var b kanban.PullRequestBadge
	var updated string
	if err := r.Scan(&b.ID, &b.TaskID, &b.Number, &b.State, &b.Checks, &b.Review, &updated); err != nil {
		return nil, err
	}
	b.UpdatedAt = parseTime(updated)
	return &b, nil
}
