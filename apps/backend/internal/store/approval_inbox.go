package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The operator's approvals inbox: the tasks on the steps that list the
// operator among their participants.

// OperatorApprovalSteps returns the steps of a workspace's workflows whose
// approval lists the operator, in workflow and board order.
func (s *Store) OperatorApprovalSteps(ctx context.Context, workspaceID string) ([]kanban.WorkflowStep, error) {
	if err := requireRow(ctx, s.stmts, "workspaces", "workspace", workspaceID); err != nil {
		return nil, err
	}
	steps, err := scanAll(ctx, s.stmts, scanStep, `SELECT `+stepColsS+` FROM workflow_steps s
		JOIN workflows w ON w.id = s.workflow_id WHERE w.workspace_id = ? AND s.approval <> ''
		ORDER BY s.workflow_id, s.position`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("approval steps: %w", err)
	}
	out := steps[:0]
	for _, st := range steps {
		if _, ok := st.Approval.Participant(kanban.ParticipantOperator); ok {
			out = append(out, st)
		}
	}
	return out, nil
}

// stepColsS is stepCols of workflow_steps aliased s.
var stepColsS = "s." + strings.ReplaceAll(strings.Join(strings.Fields(stepCols), " "), ", ", ", s.")

var arrivalListing = listing[kanban.Task]{what: "list tasks on steps",
	selectFrom: `SELECT ` + taskSel + ` FROM tasks`, scan: scanTask, cols: []string{"step_entered_at", "id"},
	key: func(t kanban.Task) []any { return []any{fmtTime(t.StepEnteredAt), t.ID} }}

// ListTasksOnSteps returns a page of the live (unarchived) tasks on the
// steps, oldest arrival first.
func (s *Store) ListTasksOnSteps(ctx context.Context, stepIDs []string, p kanban.Page) (*kanban.List[kanban.Task], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if len(stepIDs) == 0 {
		return &kanban.List[kanban.Task]{Items: []kanban.Task{}}, nil
	}
	args := make([]any, len(stepIDs))
	for i, id := range stepIDs {
		args[i] = id
	}
	where := `archived_at IS NULL AND workflow_step_id IN (?` + strings.Repeat(", ?", len(stepIDs)-1) + `)`
	return arrivalListing.page(ctx, s.stmts, p, where, args...)
}
