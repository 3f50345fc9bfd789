package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Claims that make work once-only however many backends do it at the
// same moment: a compare-and-set on the task's row.
//
// Heartbeats: a task on a step with heartbeat_minutes is due a heartbeat
// every that many minutes after it arrived, counted from its last one on
// this visit (tasks.heartbeat_at, cleared when it moves to another step).
// After downtime a due task gets one heartbeat, not one per interval
// missed.

// DueHeartbeats returns up to limit live tasks whose heartbeat is due at
// now, on the steps with heartbeat_minutes and on_heartbeat automations
// (a heartbeat nothing runs on is not recorded), per step one indexed
// range of (workflow_step_id, step_entered_at).
func (s *Store) DueHeartbeats(ctx context.Context, now time.Time, limit int) ([]kanban.HeartbeatDue, error) {
	steps, err := scanAll(ctx, s.stmts, scanStep, `SELECT `+stepCols+` FROM workflow_steps WHERE heartbeat_minutes > 0 ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("due heartbeats: %w", err)
	}
	var out []kanban.HeartbeatDue
	for _, r := range steps {
		if len(out) >= limit {
			break
		}
		if len(r.Events[kanban.EventHeartbeat]) == 0 {
			continue
		}
		cutoff := fmtTime(now.Add(-time.Duration(r.HeartbeatMinutes) * time.Minute))
		due, err := scanAll(ctx, s.stmts, func(row rowSource) (*kanban.HeartbeatDue, error) {
			d := kanban.HeartbeatDue{StepID: r.ID, Minutes: r.HeartbeatMinutes}
			var entered string
			var last sql.NullString
			if err := row.Scan(&d.TaskID, &entered, &last); err != nil {
				return nil, err
			}
			d.StepEnteredAt, d.LastAt = parseTime(entered), parseTimePtr(last)
			return &d, nil
		}, `SELECT id, step_entered_at, heartbeat_at FROM tasks WHERE workflow_step_id = ? AND archived_at IS NULL
			AND step_entered_at <= ? AND (heartbeat_at IS NULL OR heartbeat_at <= ?)
			ORDER BY step_entered_at, id LIMIT ?`, r.ID, cutoff, cutoff, limit-len(out))
		if err != nil {
			return nil, fmt.Errorf("due heartbeats: %w", err)
		}
		out = append(out, due...)
	}
	return out, nil
}

// ClaimHeartbeat moves d's task's last heartbeat from d.LastAt (as read)
// to now, unless it moved since or the task left the step, arrived
// again, was archived or deleted: then false, and nothing is written.
func (s *Store) ClaimHeartbeat(ctx context.Context, d kanban.HeartbeatDue, at time.Time) (bool, error) {
	last := ""
	if d.LastAt != nil {
		last = fmtTime(*d.LastAt)
	}
	return s.casUpdate(ctx, "claim heartbeat", `UPDATE tasks SET heartbeat_at = ? WHERE id = ? AND workflow_step_id = ?
		AND step_entered_at = ? AND archived_at IS NULL AND COALESCE(heartbeat_at, '') = ?`,
		fmtTime(at), d.TaskID, d.StepID, fmtTime(d.StepEnteredAt), last)
}

// casUpdate runs one compare-and-set UPDATE (its WHERE names the values
// read) in a transaction and says whether it changed the one row.
func (s *Store) casUpdate(ctx context.Context, what, query string, args ...any) (bool, error) {
	claimed := false
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		claimed = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return claimed, nil
}

// ClaimQuorum claims the resolution of the quorum of the task's visit of
// stepID that began at entered: true for the one caller that resolves it;
// false when another did, or the task left the step or arrived again.
func (s *Store) ClaimQuorum(ctx context.Context, taskID, stepID string, entered time.Time) (bool, error) {
	visit := fmtTime(entered)
	return s.casUpdate(ctx, "claim quorum", `UPDATE tasks SET quorum_visit = ? WHERE id = ? AND workflow_step_id = ?
		AND step_entered_at = ? AND COALESCE(quorum_visit, '') <> ?`, visit, taskID, stepID, visit, visit)
}

// ReleaseQuorum undoes the quorum claim of the task's visit that began at
// entered, so a later decision of that visit can resolve it.
func (s *Store) ReleaseQuorum(ctx context.Context, taskID string, entered time.Time) error {
	_, err := s.casUpdate(ctx, "release quorum", `UPDATE tasks SET quorum_visit = NULL WHERE id = ? AND quorum_visit = ?`,
		taskID, fmtTime(entered))
	return err
}
