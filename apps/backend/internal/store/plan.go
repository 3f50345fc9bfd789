package store

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const planColumns = `task_id, title, content, revision, created_by, created_at, updated_at`

func checkPlanFields(title, content, by string) error {
	if err := kanban.CheckLine("title", title, false, kanban.MaxPlanTitleLen); err != nil {
		return err
	}
	if err := kanban.CheckText("content", content, true, kanban.MaxContentLen); err != nil {
		return err
	}
	return kanban.CheckText("created_by", by, false, kanban.MaxNameLen)
}

// CreatePlan creates a task's plan at revision 1 (also recorded as a
// revision). NOT_FOUND for a missing task, CONFLICT when a plan exists.
func (s *Store) CreatePlan(ctx context.Context, p kanban.Plan) (*kanban.Plan, error) {
	if err := checkPlanFields(p.Title, p.Content, p.CreatedBy); err != nil {
		return nil, err
	}
	var out *kanban.Plan
	err := s.tx(ctx, func(tx txn) error {
		if _, err := taskWorkspaceOf(ctx, tx, p.TaskID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM task_plans WHERE task_id = ?`, p.TaskID).Scan(&n); err != nil {
			return fmt.Errorf("create plan: %w", err)
		}
		if n > 0 {
			return kanban.Errorf(kanban.CodeConflict, "the task already has a plan; update it instead")
		}
		now := fmtTime(kanban.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_plans (`+planColumns+`) VALUES (?, ?, ?, 1, ?, ?, ?)`,
			p.TaskID, p.Title, p.Content, p.CreatedBy, now, now); err != nil {
			return fmt.Errorf("create plan: %w", err)
		}
		if err := insertPlanRevision(ctx, tx, p.TaskID, 1, p.Title, p.Content, p.CreatedBy, now); err != nil {
			return err
		}
		var err error
		out, err = getPlan(ctx, tx, p.TaskID)
		return err
	})
	return out, err
}

func insertPlanRevision(ctx context.Context, tx txn, taskID string, rev int, title, content, by, at string) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_plan_revisions (task_id, revision, title, content,
		created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)`, taskID, rev, title, content, by, at); err != nil {
		return fmt.Errorf("plan revision: %w", err)
	}
	return nil
}

// GetPlan returns a task's plan (NOT_FOUND when it has none).
func (s *Store) GetPlan(ctx context.Context, taskID string) (*kanban.Plan, error) {
	return getPlan(ctx, s.stmts, taskID)
}

func getPlan(ctx context.Context, q queryer, taskID string) (*kanban.Plan, error) {
	row := q.QueryRowContext(ctx, `SELECT `+planColumns+` FROM task_plans WHERE task_id = ?`, taskID)
	p, err := scanPlan(row)
	if err != nil {
		return nil, notFound(err, "plan")
	}
	return p, nil
}

// UpdatePlan stores a new revision of a task's plan; title nil keeps the
// current title. The plan keeps its creator; by is recorded on the
// revision. NOT_FOUND when the task has no plan.
func (s *Store) UpdatePlan(ctx context.Context, taskID string, title *string, content string, by string) (*kanban.Plan, error) {
	t := ""
	if title != nil {
		t = *title
	}
	if err := checkPlanFields(t, content, by); err != nil {
		return nil, err
	}
	var out *kanban.Plan
	err := s.tx(ctx, func(tx txn) error {
		cur, err := getPlan(ctx, tx, taskID)
		if err != nil {
			return err
		}
		if title == nil {
			t = cur.Title
		}
		rev, now := cur.Revision+1, fmtTime(kanban.Now())
		if _, err := tx.ExecContext(ctx, `UPDATE task_plans SET title = ?, content = ?, revision = ?,
			updated_at = ? WHERE task_id = ?`, t, content, rev, now, taskID); err != nil {
			return fmt.Errorf("update plan: %w", err)
		}
		if err := insertPlanRevision(ctx, tx, taskID, rev, t, content, by, now); err != nil {
			return err
		}
		out, err = getPlan(ctx, tx, taskID)
		return err
	})
	return out, err
}

// DeletePlan deletes a task's plan and its revisions (NOT_FOUND when the
// task has no plan).
func (s *Store) DeletePlan(ctx context.Context, taskID string) error {
	return s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM task_plans WHERE task_id = ?`, taskID)
		if err := affectedOne(res, err, "plan"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM task_plan_revisions WHERE task_id = ?`, taskID); err != nil {
			return fmt.Errorf("delete plan: %w", err)
		}
		return nil
	})
}

// ListPlanRevisions lists a task's plan revisions, newest first. Each
// revision's CreatedAt and UpdatedAt are when it was written. NOT_FOUND for
// a missing task.
func (s *Store) ListPlanRevisions(ctx context.Context, taskID string, p kanban.Page) (*kanban.List[kanban.Plan], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if _, err := taskWorkspaceOf(ctx, s.stmts, taskID); err != nil {
		return nil, err
	}
	return planRevisionListing.page(ctx, s.stmts, p, `task_id = ?`, taskID)
}

var planRevisionListing = listing[kanban.Plan]{what: "list plan revisions",
	selectFrom: `SELECT task_id, title, content, revision, created_by, created_at, created_at FROM task_plan_revisions`,
	scan:       scanPlan, cols: []string{"revision"}, desc: true, key: func(x kanban.Plan) []any { return []any{x.Revision} }}

func scanPlan(r rowSource) (*kanban.Plan, error) {
	var (
		p                  kanban.Plan
		createdAt, updated string
	)
	if err := r.Scan(&p.TaskID, &p.Title, &p.Content, &p.Revision, &p.CreatedBy, &createdAt, &updated); err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = parseTime(createdAt), parseTime(updated)
	return &p, nil
}
