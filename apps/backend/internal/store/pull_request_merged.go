package store

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// MarkPullRequestMerged records that a pull request is merged, with the
// head that was merged (when known), and reports whether this call moved
// it to merged: of two writers that both saw it open (a merge through
// Kandev and a watcher's poll, or two backends), exactly one gets true,
// so what follows a merge (the on_pr_merged automations) happens once.
// The write moves the row's version, so a poll claimed before it records
// nothing over it. NOT_FOUND when the pull request is missing.
func (s *Store) MarkPullRequestMerged(ctx context.Context, id, headSHA string) (*kanban.PullRequest, bool, error) {
	if err := checkSHA("head_sha", headSHA); err != nil {
		return nil, false, err
	}
	var out *kanban.PullRequest
	changed := false
	err := s.tx(ctx, func(tx txn) error {
		var err error
		if changed, err = markMerged(ctx, tx, id, headSHA); err != nil {
			return err
		}
		out, err = getPR(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return out, changed, nil
}

// markMerged is the compare-and-set of a pull request's move to merged
// (MarkPullRequestMerged, and a watcher's poll that found it merged):
// true when this write moved it.
func markMerged(ctx context.Context, tx txn, id, headSHA string) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE task_pull_requests SET state = 'merged',
		head_sha = CASE WHEN ? = '' THEN head_sha ELSE ? END, updated_at = ?, version = version + 1
		WHERE id = ? AND state <> 'merged'`, headSHA, headSHA, fmtTime(kanban.Now()), id)
	if err != nil {
		return false, fmt.Errorf("mark pull request merged: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("mark pull request merged: %w", err)
	}
	return n == 1, nil
}
