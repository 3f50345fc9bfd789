package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// AddDependency records that taskID is blocked by dependsOnID. It refuses
// self edges, edges across workspaces and edges that would close a cycle
// (VALIDATION_ERROR); an existing edge is returned unchanged.
func (s *Store) AddDependency(ctx context.Context, taskID, dependsOnID string) (*kanban.TaskDependency, error) {
	if taskID == "" {
		return nil, kanban.FieldError("task_id", "is required")
	}
	if dependsOnID == "" {
		return nil, kanban.FieldError("depends_on_task_id", "is required")
	}
	if taskID == dependsOnID {
		return nil, kanban.FieldError("depends_on_task_id", "a task cannot depend on itself")
	}
	var out *kanban.TaskDependency
	err := s.tx(ctx, func(tx txn) error {
		ws, err := taskWorkspaceOf(ctx, tx, taskID)
		if err != nil {
			return err
		}
		depWS, err := taskWorkspace(ctx, tx, dependsOnID, "depends_on_task_id: task not found")
		if err != nil {
			return err
		}
		if ws != depWS {
			return kanban.FieldError("depends_on_task_id", "tasks must be in the same workspace")
		}
		out, err = getDependency(ctx, tx, taskID, dependsOnID)
		if err == nil {
			return nil // the edge exists: adding it again succeeds
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("add dependency: %w", err)
		}
		if err := checkNoCycle(ctx, tx, taskID, dependsOnID); err != nil {
			return err
		}
		out, err = insertDependency(ctx, tx, taskID, dependsOnID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func getDependency(ctx context.Context, q queryer, taskID, dependsOnID string) (*kanban.TaskDependency, error) {
	d := kanban.TaskDependency{TaskID: taskID, DependsOnTaskID: dependsOnID}
	var created string
	if err := q.QueryRowContext(ctx, `SELECT created_at FROM task_dependencies WHERE task_id = ? AND depends_on_task_id = ?`,
		taskID, dependsOnID).Scan(&created); err != nil {
		return nil, err
	}
	d.CreatedAt = parseTime(created)
	return &d, nil
}

func insertDependency(ctx context.Context, tx txn, taskID, dependsOnID string) (*kanban.TaskDependency, error) {
	d := &kanban.TaskDependency{TaskID: taskID, DependsOnTaskID: dependsOnID, CreatedAt: kanban.Now()}
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_dependencies (task_id, depends_on_task_id, created_at) VALUES (?, ?, ?)`,
		taskID, dependsOnID, fmtTime(d.CreatedAt)); err != nil {
		return nil, fmt.Errorf("add dependency: %w", err)
	}
	return d, nil
}

// checkNoCycle refuses the edge taskID → dependsOnID when taskID is already
// reachable from dependsOnID by following depends-on edges.
func checkNoCycle(ctx context.Context, q queryer, taskID, dependsOnID string) error {
	var found int
	err := q.QueryRowContext(ctx, `WITH RECURSIVE reach(id) AS (
			SELECT depends_on_task_id FROM task_dependencies WHERE task_id = ?
			UNION
			SELECT d.depends_on_task_id FROM task_dependencies d JOIN reach r ON d.task_id = r.id
		)
		SELECT 1 FROM reach WHERE id = ? LIMIT 1`, dependsOnID, taskID).Scan(&found)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check dependency cycle: %w", err)
	}
	return kanban.FieldError("depends_on_task_id", "dependency would create a cycle")
}

// addBlocker links a task being created to one of its blocked_by tasks. A
// new task has no dependents, so the edge cannot close a cycle.
func addBlocker(ctx context.Context, tx txn, t *kanban.Task, blockerID string) error {
	ws, err := taskWorkspace(ctx, tx, blockerID, "blocked_by: task not found")
	if err != nil {
		return err
	}
	if ws != t.WorkspaceID {
		return kanban.FieldError("blocked_by", "tasks must be in the same workspace")
	}
	_, err = insertDependency(ctx, tx, t.ID, blockerID)
	return err
}

// RemoveDependency deletes the edge taskID → dependsOnID; a missing edge is
// not an error. NOT_FOUND when taskID does not exist.
func (s *Store) RemoveDependency(ctx context.Context, taskID, dependsOnID string) error {
	if taskID == "" {
		return kanban.FieldError("task_id", "is required")
	}
	if dependsOnID == "" {
		return kanban.FieldError("depends_on_task_id", "is required")
	}
	return s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "tasks", "task", taskID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM task_dependencies WHERE task_id = ? AND depends_on_task_id = ?`,
			taskID, dependsOnID); err != nil {
			return fmt.Errorf("remove dependency: %w", err)
		}
		return nil
	})
}
