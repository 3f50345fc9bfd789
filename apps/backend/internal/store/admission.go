package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// QueueTask puts a task in the admission queue of a full step of its
// workflow: it stays where it is, with queued_for_step_id set, until
// AdmitNext moves it in. Queueing again for the same step keeps its place.
func (s *Store) QueueTask(ctx context.Context, taskID, stepID string) (*kanban.Task, error) {
	var out *kanban.Task
	err := s.tx(ctx, func(tx txn) error {
		t, err := getTask(ctx, tx, taskID)
		if err != nil {
			return err
		}
		st, err := getStep(ctx, tx, stepID)
		if err != nil {
			return err
		}
		if st.WorkflowID != t.WorkflowID {
			return kanban.FieldError("workflow_step_id", "must be a step of the task's workflow")
		}
		if t.QueuedForStepID != stepID {
			now := fmtTime(kanban.Now())
			if _, err := tx.ExecContext(ctx, `UPDATE tasks SET queued_for_step_id = ?, queued_at = ?, updated_at = ? WHERE id = ?`,
				stepID, now, now, taskID); err != nil {
				return fmt.Errorf("queue task: %w", err)
			}
		}
		out, err = getTask(ctx, tx, taskID)
		return err
	})
	return out, err
}

// AdmitNext moves one task onto step stepID when the step has room: the
// task waiting longest in its admission queue, else the task that has
// been on its pull_from_step_id step the longest, since arrivedBy at the
// latest (not archived, not waiting for another step). It returns nil
// when the step is full or nothing waits. One transaction: the room is
// checked and taken at once.
func (s *Store) AdmitNext(ctx context.Context, stepID string, arrivedBy time.Time) (*kanban.Admission, error) {
	var out *kanban.Admission
	err := s.tx(ctx, func(tx txn) error {
		st, err := getStep(ctx, tx, stepID)
		if err != nil {
			return err
		}
		if st.WIPLimit > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE workflow_step_id = ? AND archived_at IS NULL`,
				stepID).Scan(&n); err != nil {
				return fmt.Errorf("admit: %w", err)
			}
			if n >= st.WIPLimit {
				return nil
			}
		}
		id, pulled, err := nextAdmission(ctx, tx, st, arrivedBy)
		if err != nil || id == "" {
			return err
		}
		t, err := getTask(ctx, tx, id)
		if err != nil {
			return err
		}
		from := t.WorkflowStepID
		if err := placeTask(ctx, tx, t, stepID, -1); err != nil {
			return err
		}
		out = &kanban.Admission{Task: t, FromStepID: from, Pulled: pulled}
		return nil
	})
	return out, err
}

// nextAdmission picks the task to admit onto st ("" when none).
func nextAdmission(ctx context.Context, tx txn, st *kanban.WorkflowStep, arrivedBy time.Time) (string, bool, error) {
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM tasks WHERE queued_for_step_id = ? AND archived_at IS NULL
		ORDER BY queued_at, id LIMIT 1`, st.ID).Scan(&id)
	if err == nil {
		return id, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", false, fmt.Errorf("admit: %w", err)
	}
	if st.PullFromStepID == "" {
		return "", false, nil
	}
	err = tx.QueryRowContext(ctx, `SELECT id FROM tasks WHERE workflow_step_id = ? AND archived_at IS NULL
		AND queued_for_step_id IS NULL AND step_entered_at <= ? ORDER BY step_entered_at, id LIMIT 1`,
		st.PullFromStepID, fmtTime(arrivedBy)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("admit: %w", err)
	}
	return id, true, nil
}

// PullingSteps returns the ids of the steps whose pull_from_step_id is
// stepID, by position (one indexed lookup; none for most steps).
func (s *Store) PullingSteps(ctx context.Context, stepID string) ([]string, error) {
	scan := func(r rowSource) (*string, error) {
		var id string
		return &id, r.Scan(&id)
	}
	ids, err := scanAll(ctx, s.stmts, scan, `SELECT id FROM workflow_steps WHERE pull_from_step_id = ?
		ORDER BY position, id`, stepID)
	if err != nil {
		return nil, fmt.Errorf("pulling steps: %w", err)
	}
	return ids, nil
}

// DueForArchive returns up to limit live tasks, across all workflows, that
// have been on a step with auto_archive_after_hours longer than that many
// hours at now, oldest arrival first per step. Each step is one indexed
// range scan of (workflow_step_id, step_entered_at).
func (s *Store) DueForArchive(ctx context.Context, now time.Time, limit int) ([]kanban.Task, error) {
	type rule struct {
		id    string
		hours int
	}
	scanRule := func(r rowSource) (*rule, error) {
		var x rule
		return &x, r.Scan(&x.id, &x.hours)
	}
	rules, err := scanAll(ctx, s.stmts, scanRule, `SELECT id, auto_archive_after_hours FROM workflow_steps
		WHERE auto_archive_after_hours > 0 ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("due for archive: %w", err)
	}
	var out []kanban.Task
	for _, r := range rules {
		if len(out) >= limit {
			break
		}
		cutoff := fmtTime(now.Add(-time.Duration(r.hours) * time.Hour))
		due, err := scanAll(ctx, s.stmts, scanTask, `SELECT `+taskSel+` FROM tasks WHERE workflow_step_id = ?
			AND archived_at IS NULL AND step_entered_at <= ? ORDER BY step_entered_at, id LIMIT ?`, r.id, cutoff, limit-len(out))
		if err != nil {
			return nil, fmt.Errorf("due for archive: %w", err)
		}
		out = append(out, due...)
	}
	return out, nil
}

// QueuedTasks counts the live tasks waiting for room on a step (WIP
// limits), on every backend: a walk of idx_tasks_queued, which holds only
// queued tasks.
func (s *Store) QueuedTasks(ctx context.Context) (int, error) {
	var n int
	if err := s.stmts.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE queued_for_step_id IS NOT NULL AND archived_at IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count queued tasks: %w", err)
	}
	return n, nil
}
