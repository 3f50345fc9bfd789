package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// resolveStepRefs checks and settles the references a step makes to other
// steps, once every step of its workflow exists: move_to_step automations
// given a step_position get the step_id of the step at that position;
// every step_id, and pull_from_step_id, must name a step of the same
// workflow. It reports whether st changed.
func resolveStepRefs(ctx context.Context, tx txn, st *kanban.WorkflowStep) (bool, error) {
	byPos, byID, err := workflowStepIndex(ctx, tx, st.WorkflowID)
	if err != nil {
		return false, err
	}
	changed := false
	if st.PullFromPosition != nil {
		id, found := byPos[*st.PullFromPosition]
		if !found {
			return false, kanban.FieldError("pull_from_step_position", "must be the position of a step of the workflow")
		}
		st.PullFromStepID, st.PullFromPosition, changed = id, nil, true
	}
	if st.PullFromStepID != "" && (!byID[st.PullFromStepID] || st.PullFromStepID == st.ID) {
		return false, kanban.FieldError("pull_from_step_id", "must be another step of the same workflow")
	}
	if ok, err := resolveRejectStep(st, byPos, byID); err != nil {
		return false, err
	} else if ok {
		changed = true
	}
	for ev, actions := range st.Events {
		for i := range actions {
			a := &actions[i]
			if a.Type != kanban.AutoMoveToStep {
				continue
			}
			field := fmt.Sprintf("events.%s[%d].config", ev, i)
			if pos, ok := a.ConfigInt("step_position"); ok {
				id, found := byPos[pos]
				if !found {
					return false, kanban.FieldError(field+".step_position", "must be the position of a step of the workflow")
				}
				a.Config = map[string]json.RawMessage{"step_id": json.RawMessage(`"` + id + `"`)}
				changed = true
				continue
			}
			if !byID[a.ConfigString("step_id")] {
				return false, kanban.FieldError(field+".step_id", "must be a step of the same workflow")
			}
		}
	}
	return changed, nil
}

// resolveRejectStep turns an approval's reject_step_position into its
// reject_step_id and checks that the id names another step of the
// workflow. It reports whether st changed.
func resolveRejectStep(st *kanban.WorkflowStep, byPos map[int]string, byID map[string]bool) (bool, error) {
	a := st.Approval
	if a == nil {
		return false, nil
	}
	changed := false
	if a.RejectStepPosition != nil {
		id, found := byPos[*a.RejectStepPosition]
		if !found || id == st.ID {
			return false, kanban.FieldError("approval.reject_step_position", "must be the position of another step of the workflow")
		}
		a.RejectStepID, a.RejectStepPosition, changed = id, nil, true
	}
	if a.RejectStepID != "" && (!byID[a.RejectStepID] || a.RejectStepID == st.ID) {
		return false, kanban.FieldError("approval.reject_step_id", "must be another step of the same workflow")
	}
	return changed, nil
}

// workflowStepIndex maps a workflow's step positions to ids, and its ids.
func workflowStepIndex(ctx context.Context, tx txn, workflowID string) (map[int]string, map[string]bool, error) {
	type ref struct {
		id  string
		pos int
	}
	scan := func(r rowSource) (*ref, error) {
		var x ref
		return &x, r.Scan(&x.id, &x.pos)
	}
	refs, err := scanAll(ctx, tx, scan, `SELECT id, position FROM workflow_steps WHERE workflow_id = ?`, workflowID)
	if err != nil {
		return nil, nil, fmt.Errorf("step references: %w", err)
	}
	byPos, byID := make(map[int]string, len(refs)), make(map[string]bool, len(refs))
	for _, x := range refs {
		byPos[x.pos], byID[x.id] = x.id, true
	}
	return byPos, byID, nil
}

// settleStepRefs resolves the references of st and writes it again when a
// step_position was turned into a step_id.
func settleStepRefs(ctx context.Context, tx txn, st *kanban.WorkflowStep) error {
	changed, err := resolveStepRefs(ctx, tx, st)
	if err != nil || !changed {
		return err
	}
	return writeStep(ctx, tx, st)
}
