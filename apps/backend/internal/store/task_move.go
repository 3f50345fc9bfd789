package store

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// MoveTask moves a task within its workflow; see kanban.TaskService. Task
// positions stay dense (0..n-1) in the source and target steps: they are
// ranks of sparse keys (task_position.go), and a move writes one key.
func (s *Store) MoveTask(ctx context.Context, id, stepID string, position int) (*kanban.Task, error) {
	return s.moveTask(ctx, id, stepID, position, false)
}

// MoveTaskAcross is MoveTask onto a step of any workflow of the task's
// workspace: the task joins that workflow.
func (s *Store) MoveTaskAcross(ctx context.Context, id, stepID string, position int) (*kanban.Task, error) {
	return s.moveTask(ctx, id, stepID, position, true)
}

func (s *Store) moveTask(ctx context.Context, id, stepID string, position int, across bool) (*kanban.Task, error) {
	if stepID == "" {
		return nil, kanban.FieldError("workflow_step_id", "is required")
	}
	if position < -1 {
		return nil, kanban.FieldError("position", "must be -1 (last) or a 0-based index")
	}
	var out *kanban.Task
	err := s.tx(ctx, func(tx txn) error {
		t, err := getTask(ctx, tx, id)
		if err != nil {
			return err
		}
		st, err := getStep(ctx, tx, stepID)
		if err != nil {
			return err
		}
		if st.WorkflowID != t.WorkflowID {
			if !across {
				return kanban.FieldError("workflow_step_id", "must be a step of the task's workflow")
			}
			if err := joinWorkflow(ctx, tx, t, st.WorkflowID); err != nil {
				return err
			}
		}
		if err := checkWIP(ctx, tx, t, st); err != nil {
			return err
		}
		if err := placeTask(ctx, tx, t, st.ID, position); err != nil {
			return err
		}
		out = t
		return nil
	})
	return out, err
}

// joinWorkflow moves t to workflow wf of its own workspace (its step is
// set by the placement that follows).
func joinWorkflow(ctx context.Context, tx txn, t *kanban.Task, wf string) error {
	var ws string
	if err := tx.QueryRowContext(ctx, `SELECT workspace_id FROM workflows WHERE id = ?`, wf).Scan(&ws); err != nil {
		return notFound(err, "workflow")
	}
	if ws != t.WorkspaceID {
		return kanban.FieldError("workflow_id", "must be a workflow of the task's workspace")
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET workflow_id = ? WHERE id = ?`, wf, t.ID); err != nil {
		return fmt.Errorf("move task: %w", err)
	}
	t.WorkflowID = wf
	return nil
}

// checkWIP refuses to bring a live task onto a step whose wip_limit is
// already reached by other live tasks. Moves within a step add no work.
func checkWIP(ctx context.Context, tx txn, t *kanban.Task, st *kanban.WorkflowStep) error {
	if st.WIPLimit <= 0 || st.ID == t.WorkflowStepID || t.ArchivedAt != nil {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE workflow_step_id = ? AND archived_at IS NULL AND id <> ?`,
		st.ID, t.ID).Scan(&n); err != nil {
		return fmt.Errorf("move task: wip: %w", err)
	}
	if n >= st.WIPLimit {
		return kanban.Errorf(kanban.CodeConflict, "step wip_limit reached (%d tasks)", st.WIPLimit)
	}
	return nil
}

// placeTask puts t at position in stepID (its rank there; -1 or past the
// end means last) by giving it a key between its new neighbours', and
// updates t in place.
func placeTask(ctx context.Context, tx txn, t *kanban.Task, stepID string, position int) error {
	blocks, err := stepBlocks(ctx, tx, stepID)
	if err != nil {
		return fmt.Errorf("move task: %w", err)
	}
	same := stepID == t.WorkflowStepID
	pl := placement{stepID: stepID, from: -1, rank: position}
	others := stepSize(blocks) // tasks on the target step other than t
	if same {
		pl.from = t.Position
		others--
	}
	if pl.rank == -1 || pl.rank > others {
		pl.rank = others
	}
	key, err := keyFor(ctx, tx, pl, blocks, others)
	if err != nil {
		return fmt.Errorf("move task: %w", err)
	}
	now := kanban.Now()
	if !same {
		t.StepEnteredAt = now
	}
	t.WorkflowStepID, t.Position, t.UpdatedAt = stepID, pl.rank, now
	t.QueuedForStepID, t.QueuedAt = "", nil // any move ends a wait for admission
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET workflow_step_id = ?, position = ?, updated_at = ?, step_entered_at = ?,
		queued_for_step_id = NULL, queued_at = NULL, heartbeat_at = CASE WHEN ? = 1 THEN NULL ELSE heartbeat_at END WHERE id = ?`,
		stepID, key, fmtTime(t.UpdatedAt), fmtTime(t.StepEnteredAt), boolInt(!same), t.ID); err != nil {
		return fmt.Errorf("move task: %w", err)
	}
	return nil
}

// UnarchiveTask puts an archived task back on its step, last; a task that
// is not archived is returned unchanged. A step whose wip_limit its live
// tasks already reach refuses it (CONFLICT), as a move there would.
func (s *Store) UnarchiveTask(ctx context.Context, id string) (*kanban.Task, error) {
	var out *kanban.Task
	err := s.tx(ctx, func(tx txn) error {
		t, err := getTask(ctx, tx, id)
		if err != nil || t.ArchivedAt == nil {
			out = t
			return err
		}
		st, err := getStep(ctx, tx, t.WorkflowStepID)
		if err != nil {
			return err
		}
		if st.WIPLimit > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE workflow_step_id = ? AND archived_at IS NULL`,
				st.ID).Scan(&n); err != nil {
				return fmt.Errorf("unarchive task: wip: %w", err)
			}
			if n >= st.WIPLimit {
				return kanban.Errorf(kanban.CodeConflict, "step wip_limit reached (%d tasks): make room on the step first", st.WIPLimit)
			}
		}
		now := fmtTime(kanban.Now())
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET archived_at = NULL, updated_at = ?,
			position = (SELECT COALESCE(MAX(position), 0) + ? FROM tasks WHERE workflow_step_id = ?) WHERE id = ?`,
			now, int64(keyGap), st.ID, id); err != nil {
			return fmt.Errorf("unarchive task: %w", err)
		}
		out, err = getTask(ctx, tx, id)
		return err
	})
	return out, err
}
