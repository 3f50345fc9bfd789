package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const stepCols = `id, workflow_id, name, position, color, prompt, is_start_step, allow_manual_move,
	auto_advance, wip_limit, auto_archive_after_hours, events, created_at, updated_at,
	auto_advance_requires_signal, pull_from_step_id, cancel_triggers_turn_complete, show_in_command_panel, agent_profile_id, approval, heartbeat_minutes`

// encodeEvents validates and encodes step events: keys must be
// StepEventKinds and every action needs a type.
func encodeEvents(ev map[string][]kanban.StepAction) (string, error) {
	if err := kanban.CheckEvents("events", ev); err != nil {
		return "", err
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return "", kanban.FieldError("events", "config values must be valid JSON")
	}
	if len(b) > kanban.MaxStepEventsBytes {
		return "", kanban.FieldError("events", "larger than %d bytes", kanban.MaxStepEventsBytes)
	}
	return string(b), nil
}

// encodeApproval validates and encodes a step's approval ("" for none).
func encodeApproval(a *kanban.StepApproval) (string, error) {
	if err := kanban.CheckApproval("approval", a); err != nil {
		return "", err
	}
	return kanban.EncodeApproval(a)
}

// insertStep writes st as given (ID and timestamps are assigned) after
// checking that its name is free in the workflow.
func insertStep(ctx context.Context, tx txn, st *kanban.WorkflowStep) error {
	if err := checkStepNameFree(ctx, tx, st.WorkflowID, st.Name, ""); err != nil {
		return err
	}
	events, err := encodeEvents(st.Events)
	if err != nil {
		return err
	}
	if st.Events == nil {
		st.Events = map[string][]kanban.StepAction{}
	}
	approval, err := encodeApproval(st.Approval)
	if err != nil {
		return err
	}
	now := kanban.Now()
	st.ID, st.CreatedAt, st.UpdatedAt = kanban.NewID(), now, now
	_, err = tx.ExecContext(ctx, `INSERT INTO workflow_steps (`+stepCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		st.ID, st.WorkflowID, st.Name, st.Position, st.Color, st.Prompt, boolInt(st.IsStartStep),
		boolInt(st.AllowManualMove), boolInt(st.AutoAdvance), st.WIPLimit, st.AutoArchiveAfterHours,
		events, fmtTime(now), fmtTime(now), boolInt(st.AutoAdvanceRequiresSignal), nullString(st.PullFromStepID),
		boolInt(st.CancelTriggersTurnComplete), boolInt(st.ShowInCommandPanel), nullString(st.AgentProfileID), approval, st.HeartbeatMinutes)
	if isUniqueConstraint(err) {
		return stepNameConflict()
	}
	if err != nil {
		return fmt.Errorf("insert step: %w", err)
	}
	return nil
}

func stepNameConflict() error {
	return kanban.Errorf(kanban.CodeConflict, "a step with this name already exists in the workflow")
}

func checkStepNameFree(ctx context.Context, q queryer, workflowID, name, exceptID string) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM workflow_steps WHERE workflow_id = ? AND name = ? AND id <> ?`,
		workflowID, name, exceptID).Scan(&n); err != nil {
		return fmt.Errorf("check step name: %w", err)
	}
	if n > 0 {
		return stepNameConflict()
	}
	return nil
}

// CreateStep appends a step to its workflow. The first step of a workflow
// becomes its start step; a step flagged IsStartStep takes the flag from the
// others. NOT_FOUND for a missing workflow, CONFLICT for a duplicate name.
func (s *Store) CreateStep(ctx context.Context, st kanban.WorkflowStep) (*kanban.WorkflowStep, error) {
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "workflows", "workflow", st.WorkflowID); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(position), -1) + 1 FROM workflow_steps WHERE workflow_id = ?`,
			st.WorkflowID).Scan(&st.Position); err != nil {
			return fmt.Errorf("create step: %w", err)
		}
		if st.Position >= kanban.MaxWorkflowSteps {
			return kanban.Errorf(kanban.CodeConflict, "a workflow has at most %d steps", kanban.MaxWorkflowSteps)
		}
		first := st.Position == 0 // the workflow has no step yet
		if at := st.InsertAt; at != nil && *at < st.Position {
			if _, err := tx.ExecContext(ctx, `UPDATE workflow_steps SET position = position + 1 WHERE workflow_id = ? AND position >= ?`,
				st.WorkflowID, *at); err != nil {
				return fmt.Errorf("create step: %w", err)
			}
			st.Position = *at
		}
		if first {
			st.IsStartStep = true
		}
		if st.IsStartStep {
			if err := clearStartStep(ctx, tx, st.WorkflowID); err != nil {
				return err
			}
		}
		if err := insertStep(ctx, tx, &st); err != nil {
			return err
		}
		return settleStepRefs(ctx, tx, &st)
	})
	if err != nil {
		return nil, err
	}
	return &st, nil
}

func clearStartStep(ctx context.Context, tx txn, workflowID string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE workflow_steps SET is_start_step = 0 WHERE workflow_id = ? AND is_start_step = 1`,
		workflowID); err != nil {
		return fmt.Errorf("clear start step: %w", err)
	}
	return nil
}

// GetStep returns a step (NOT_FOUND when missing).
func (s *Store) GetStep(ctx context.Context, id string) (*kanban.WorkflowStep, error) {
	return getStep(ctx, s.stmts, id)
}

func getStep(ctx context.Context, q queryer, id string) (*kanban.WorkflowStep, error) {
	st, err := scanStep(q.QueryRowContext(ctx, `SELECT `+stepCols+` FROM workflow_steps WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "workflow step")
	}
	return st, nil
}

func scanStep(r rowSource) (*kanban.WorkflowStep, error) {
	var st kanban.WorkflowStep
	var start, manual, auto, signal, cancelTurn, panel int
	var events, created, updated, approval string
	var pull, profile sql.NullString
	if err := r.Scan(&st.ID, &st.WorkflowID, &st.Name, &st.Position, &st.Color, &st.Prompt, &start, &manual,
		&auto, &st.WIPLimit, &st.AutoArchiveAfterHours, &events, &created, &updated, &signal, &pull, &cancelTurn, &panel,
		&profile, &approval, &st.HeartbeatMinutes); err != nil {
		return nil, err
	}
	var err error
	if st.Approval, err = kanban.DecodeApproval(approval); err != nil {
		return nil, fmt.Errorf("step %s: %w", st.ID, err)
	}
	st.AgentProfileID = profile.String
	st.IsStartStep, st.AllowManualMove, st.AutoAdvance = start != 0, manual != 0, auto != 0
	st.AutoAdvanceRequiresSignal, st.PullFromStepID = signal != 0, pull.String
	st.CancelTriggersTurnComplete, st.ShowInCommandPanel = cancelTurn != 0, panel != 0
	if err := json.Unmarshal([]byte(events), &st.Events); err != nil {
		return nil, fmt.Errorf("step %s: decode events: %w", st.ID, err)
	}
	if st.Events == nil {
		st.Events = map[string][]kanban.StepAction{}
	}
	st.CreatedAt, st.UpdatedAt = parseTime(created), parseTime(updated)
	return &st, nil
}

// ListSteps lists a workflow's steps in board order. NOT_FOUND when the
// workflow is missing.
func (s *Store) ListSteps(ctx context.Context, workflowID string, p kanban.Page) (*kanban.List[kanban.WorkflowStep], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "workflows", "workflow", workflowID); err != nil {
		return nil, err
	}
	return stepListing.page(ctx, s.stmts, p, `workflow_id = ?`, workflowID)
}

var stepListing = listing[kanban.WorkflowStep]{what: "list steps",
	selectFrom: `SELECT ` + stepCols + ` FROM workflow_steps`, scan: scanStep, cols: []string{"position", "id"},
	key: func(st kanban.WorkflowStep) []any { return []any{st.Position, st.ID} }}

func allSteps(ctx context.Context, q queryer, workflowID string) ([]kanban.WorkflowStep, error) {
	steps, err := scanAll(ctx, q, scanStep, `SELECT `+stepCols+` FROM workflow_steps WHERE workflow_id = ? ORDER BY position, id`, workflowID)
	if err != nil {
		return nil, fmt.Errorf("list steps: %w", err)
	}
	return steps, nil
}

// UpdateStep changes the given fields of a step. Setting IsStartStep takes
// the flag from the other steps; clearing it on the start step is refused
// (a workflow always has one start step).
func (s *Store) UpdateStep(ctx context.Context, id string, u kanban.StepUpdate) (*kanban.WorkflowStep, error) {
	var out *kanban.WorkflowStep
	err := s.tx(ctx, func(tx txn) error {
		st, err := getStep(ctx, tx, id)
		if err != nil {
			return err
		}
		wasStart := st.IsStartStep
		applyStepUpdate(st, u)
		if wasStart && !st.IsStartStep {
			return kanban.FieldError("is_start_step", "cannot be cleared; mark another step as the start step instead")
		}
		if err := checkStepNameFree(ctx, tx, st.WorkflowID, st.Name, st.ID); err != nil {
			return err
		}
		if st.IsStartStep && !wasStart {
			if err := clearStartStep(ctx, tx, st.WorkflowID); err != nil {
				return err
			}
		}
		if _, err := resolveStepRefs(ctx, tx, st); err != nil {
			return err
		}
		if err := writeStep(ctx, tx, st); err != nil {
			return err
		}
		out = st
		return nil
	})
	return out, err
}

func applyStepUpdate(st *kanban.WorkflowStep, u kanban.StepUpdate) {
	setIf(&st.Name, u.Name)
	setIf(&st.Color, u.Color)
	setIf(&st.Prompt, u.Prompt)
	setIf(&st.IsStartStep, u.IsStartStep)
	setIf(&st.AllowManualMove, u.AllowManualMove)
	setIf(&st.AutoAdvance, u.AutoAdvance)
	setIf(&st.WIPLimit, u.WIPLimit)
	setIf(&st.AutoArchiveAfterHours, u.AutoArchiveAfterHours)
	setIf(&st.HeartbeatMinutes, u.HeartbeatMinutes)
	setIf(&st.AutoAdvanceRequiresSignal, u.AutoAdvanceRequiresSignal)
	setIf(&st.CancelTriggersTurnComplete, u.CancelTriggersTurnComplete)
	setIf(&st.ShowInCommandPanel, u.ShowInCommandPanel)
	setIf(&st.PullFromStepID, u.PullFromStepID)
	if u.Events != nil {
		st.Events = u.Events
	}
	if u.Approval != nil {
		st.Approval = u.Approval
	}
	if u.ClearApproval {
		st.Approval = nil
	}
}

func writeStep(ctx context.Context, tx txn, st *kanban.WorkflowStep) error {
	events, err := encodeEvents(st.Events)
	if err != nil {
		return err
	}
	approval, err := encodeApproval(st.Approval)
	if err != nil {
		return err
	}
	st.UpdatedAt = kanban.Now()
	_, err = tx.ExecContext(ctx, `UPDATE workflow_steps SET name = ?, color = ?, prompt = ?, is_start_step = ?,
		allow_manual_move = ?, auto_advance = ?, wip_limit = ?, auto_archive_after_hours = ?, events = ?, updated_at = ?,
		auto_advance_requires_signal = ?, pull_from_step_id = ?, cancel_triggers_turn_complete = ?, show_in_command_panel = ?,
		approval = ?, heartbeat_minutes = ? WHERE id = ?`,
		st.Name, st.Color, st.Prompt, boolInt(st.IsStartStep), boolInt(st.AllowManualMove), boolInt(st.AutoAdvance),
		st.WIPLimit, st.AutoArchiveAfterHours, events, fmtTime(st.UpdatedAt), boolInt(st.AutoAdvanceRequiresSignal),
		nullString(st.PullFromStepID), boolInt(st.CancelTriggersTurnComplete), boolInt(st.ShowInCommandPanel), approval, st.HeartbeatMinutes, st.ID)
	if isUniqueConstraint(err) {
		return stepNameConflict()
	}
	if err != nil {
		return fmt.Errorf("update step: %w", err)
	}
	return nil
}

// DeleteStep deletes a step and closes the gap in the positions. It refuses
// (CONFLICT) while any task, archived included, is on the step. When the
// start step goes, the first remaining step becomes the start step.
func (s *Store) DeleteStep(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx txn) error {
		st, err := getStep(ctx, tx, id)
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE workflow_step_id = ?`, id).Scan(&n); err != nil {
			return fmt.Errorf("delete step: %w", err)
		}
		if n > 0 {
			return kanban.Errorf(kanban.CodeConflict, "step has %d tasks (archived included); move or delete them first", n)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM workflow_steps WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete step: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE workflow_steps SET position = position - 1 WHERE workflow_id = ? AND position > ?`,
			st.WorkflowID, st.Position); err != nil {
			return fmt.Errorf("delete step: renumber: %w", err)
		}
		if !st.IsStartStep {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE workflow_steps SET is_start_step = 1 WHERE id =
			(SELECT id FROM workflow_steps WHERE workflow_id = ? ORDER BY position, id LIMIT 1)`, st.WorkflowID)
		if err != nil {
			return fmt.Errorf("delete step: new start step: %w", err)
		}
		return nil
	})
}

// ReorderSteps sets the workflow's step order to stepIDs, which must list
// each of its steps exactly once (VALIDATION_ERROR on step_ids otherwise).
func (s *Store) ReorderSteps(ctx context.Context, workflowID string, stepIDs []string) ([]kanban.WorkflowStep, error) {
	var out []kanban.WorkflowStep
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "workflows", "workflow", workflowID); err != nil {
			return err
		}
		steps, err := allSteps(ctx, tx, workflowID)
		if err != nil {
			return err
		}
		byID := make(map[string]kanban.WorkflowStep, len(steps))
		for _, st := range steps {
			byID[st.ID] = st
		}
		if !sameSet(byID, stepIDs) {
			return kanban.FieldError("step_ids", "must list each of the workflow's %d steps exactly once", len(steps))
		}
		now := kanban.Now()
		out = make([]kanban.WorkflowStep, len(stepIDs))
		for i, id := range stepIDs {
			st := byID[id]
			if st.Position != i {
				st.Position, st.UpdatedAt = i, now
				if _, err := tx.ExecContext(ctx, `UPDATE workflow_steps SET position = ?, updated_at = ? WHERE id = ?`,
					i, fmtTime(now), id); err != nil {
					return fmt.Errorf("reorder steps: %w", err)
				}
			}
			out[i] = st
		}
		return nil
	})
	return out, err
}

// sameSet reports whether ids lists every key of set exactly once and nothing else.
func sameSet[V any](set map[string]V, ids []string) bool {
	if len(ids) != len(set) {
		return false
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if _, ok := set[id]; !ok || seen[id] {
			return false
		}
		seen[id] = true
	}
	return true
}
