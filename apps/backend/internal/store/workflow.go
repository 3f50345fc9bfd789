package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const workflowCols = `id, workspace_id, name, description, sort_order, created_at, updated_at, prompt, agent_profile_id`

// validateWorkflow holds the one rule of a workflow no contract can: a
// single-line name (workflow.create, workflow.update and the document
// importer bound its length).
func validateWorkflow(w kanban.Workflow) error {
	return kanban.SingleLine("name", w.Name)
}

// CreateWorkflow creates a workflow at the end of its workspace's list
// (SortOrder is assigned). NOT_FOUND when the workspace is missing.
func (s *Store) CreateWorkflow(ctx context.Context, w kanban.Workflow) (*kanban.Workflow, error) {
	if err := validateWorkflow(w); err != nil {
		return nil, err
	}
	var out *kanban.Workflow
	err := s.tx(ctx, func(tx txn) error {
		var err error
		out, err = insertWorkflow(ctx, tx, w)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func insertWorkflow(ctx context.Context, tx txn, w kanban.Workflow) (*kanban.Workflow, error) {
	if err := requireRow(ctx, tx, "workspaces", "workspace", w.WorkspaceID); err != nil {
		return nil, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(sort_order), -1) + 1 FROM workflows WHERE workspace_id = ?`,
		w.WorkspaceID).Scan(&w.SortOrder); err != nil {
		return nil, fmt.Errorf("create workflow: %w", err)
	}
	now := kanban.Now()
	w.ID, w.CreatedAt, w.UpdatedAt = kanban.NewID(), now, now
	if _, err := tx.ExecContext(ctx, `INSERT INTO workflows (`+workflowCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.WorkspaceID, w.Name, w.Description, w.SortOrder, fmtTime(now), fmtTime(now), w.Prompt,
		nullString(w.AgentProfileID)); err != nil {
		return nil, fmt.Errorf("create workflow: %w", err)
	}
	return &w, nil
}

// GetWorkflow returns a workflow (NOT_FOUND when missing).
func (s *Store) GetWorkflow(ctx context.Context, id string) (*kanban.Workflow, error) {
	return getWorkflow(ctx, s.stmts, id)
}

func getWorkflow(ctx context.Context, q queryer, id string) (*kanban.Workflow, error) {
	w, err := scanWorkflow(q.QueryRowContext(ctx, `SELECT `+workflowCols+` FROM workflows WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "workflow")
	}
	return w, nil
}

func scanWorkflow(r rowSource) (*kanban.Workflow, error) {
	var w kanban.Workflow
	var created, updated string
	var profile sql.NullString
	if err := r.Scan(&w.ID, &w.WorkspaceID, &w.Name, &w.Description, &w.SortOrder, &created, &updated, &w.Prompt, &profile); err != nil {
		return nil, err
	}
	w.AgentProfileID = profile.String
	w.CreatedAt, w.UpdatedAt = parseTime(created), parseTime(updated)
	return &w, nil
}

// ListWorkflows lists a workspace's workflows by sort order. NOT_FOUND when
// the workspace is missing.
func (s *Store) ListWorkflows(ctx context.Context, workspaceID string, p kanban.Page) (*kanban.List[kanban.Workflow], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "workspaces", "workspace", workspaceID); err != nil {
		return nil, err
	}
	return workflowListing.page(ctx, s.stmts, p, `workspace_id = ?`, workspaceID)
}

var workflowListing = listing[kanban.Workflow]{what: "list workflows",
	selectFrom: `SELECT ` + workflowCols + ` FROM workflows`, scan: scanWorkflow, cols: []string{"sort_order", "id"},
	key: func(w kanban.Workflow) []any { return []any{w.SortOrder, w.ID} }}

// UpdateWorkflow changes the given fields of a workflow.
func (s *Store) UpdateWorkflow(ctx context.Context, id string, name, description *string) (*kanban.Workflow, error) {
	var out *kanban.Workflow
	err := s.tx(ctx, func(tx txn) error {
		w, err := getWorkflow(ctx, tx, id)
		if err != nil {
			return err
		}
		setIf(&w.Name, name)
		setIf(&w.Description, description)
		if err := validateWorkflow(*w); err != nil {
			return err
		}
		w.UpdatedAt = kanban.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE workflows SET name = ?, description = ?, updated_at = ? WHERE id = ?`,
			w.Name, w.Description, fmtTime(w.UpdatedAt), id); err != nil {
			return fmt.Errorf("update workflow: %w", err)
		}
		out = w
		return nil
	})
	return out, err
}

// DeleteWorkflow deletes a workflow and its steps. While tasks (archived
// included) are on it, it refuses with CONFLICT unless cascade, which
// deletes those tasks and everything that cascades from them.
func (s *Store) DeleteWorkflow(ctx context.Context, id string, cascade bool) error {
	return s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "workflows", "workflow", id); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE workflow_id = ?`, id).Scan(&n); err != nil {
			return fmt.Errorf("delete workflow: %w", err)
		}
		if n > 0 && !cascade {
			return kanban.Errorf(kanban.CodeConflict, "workflow has %d tasks; move or delete them first, or delete with cascade", n)
		}
		// Tasks first: they reference the steps, which go with the workflow.
		if err := dropBudgets(ctx, tx, kanban.BudgetTask, `scope_id IN (SELECT id FROM tasks WHERE workflow_id = ?)`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE workflow_id = ?`, id); err != nil {
			return fmt.Errorf("delete workflow tasks: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM workflows WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete workflow: %w", err)
		}
		return nil
	})
}

// ImportWorkflow creates a workflow and its steps in one transaction. Steps
// keep the given order; the start step is the flagged one, else the first.
// The caller has checked steps with kanban.CheckSteps (the action layer
// does, for workflow.create and for imported documents); a step name taken
// twice is still refused here, by the name check of each insert.
func (s *Store) ImportWorkflow(ctx context.Context, w kanban.Workflow, steps []kanban.WorkflowStep) (*kanban.Workflow, []kanban.WorkflowStep, error) {
	if err := validateWorkflow(w); err != nil {
		return nil, nil, err
	}
	var out *kanban.Workflow
	var outSteps []kanban.WorkflowStep
	err := s.tx(ctx, func(tx txn) error {
		var err error
		out, outSteps, err = importWorkflow(ctx, tx, w, steps)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return out, outSteps, nil
}

// importWorkflow writes a workflow and its steps in tx (ImportWorkflow).
func importWorkflow(ctx context.Context, tx txn, w kanban.Workflow, steps []kanban.WorkflowStep) (*kanban.Workflow, []kanban.WorkflowStep, error) {
	start := 0
	for i, st := range steps {
		if st.IsStartStep {
			start = i
		}
	}
	out, err := insertWorkflow(ctx, tx, w)
	if err != nil {
		return nil, nil, err
	}
	outSteps := make([]kanban.WorkflowStep, len(steps))
	for i, st := range steps {
		st.WorkflowID, st.Position, st.IsStartStep = out.ID, i, i == start
		if err := insertStep(ctx, tx, &st); err != nil {
			return nil, nil, err
		}
		outSteps[i] = st
	}
	for i := range outSteps {
		if err := settleStepRefs(ctx, tx, &outSteps[i]); err != nil {
			return nil, nil, err
		}
	}
	return out, outSteps, nil
}
