package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ListTasks lists tasks matching f; see kanban.TaskFilter for the orders.
// Every order is a keyset walk over an index (idx_tasks_step,
// idx_tasks_workflow_created, idx_tasks_parent, idx_tasks_workspace_created),
// so deep pages cost the same as the first.
func (s *Store) ListTasks(ctx context.Context, f kanban.TaskFilter, p kanban.Page) (*kanban.List[kanban.Task], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if f.WorkspaceID == "" {
		return nil, kanban.FieldError("workspace_id", "is required")
	}
	if f.State != "" && !f.State.Valid() {
		return nil, kanban.FieldError("state", "must be one of %v", kanban.TaskStates)
	}
	if err := checkTaskFilterScope(ctx, s.db, f); err != nil {
		return nil, err
	}
	query, args, err := taskListQuery(f, p)
	if err != nil {
		return nil, err
	}
	items, err := queryList(ctx, s.db, scanTask, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return page(items, p.Limit, func(t kanban.Task) []any {
		if f.WorkflowStepID != "" {
			return []any{t.Position, t.ID}
		}
		return []any{fmtTime(t.CreatedAt), t.ID}
	}), nil
}

// taskListQuery builds the keyset query of ListTasks for a checked filter
// and a normalized page.
func taskListQuery(f kanban.TaskFilter, p kanban.Page) (string, []any, error) {
	byPosition := f.WorkflowStepID != ""
	// The first condition picks the index; the scope checks made the
	// workspace condition implied by it.
	var where []string
	var args []any
	add := func(cond string, a ...any) {
		where, args = append(where, cond), append(args, a...)
	}
	switch {
	case byPosition:
		add("workflow_step_id = ?", f.WorkflowStepID)
	case f.WorkflowID != "":
		add("workflow_id = ?", f.WorkflowID)
	case f.ParentID != "":
		add("parent_id = ?", f.ParentID)
	default:
		add("workspace_id = ?", f.WorkspaceID)
	}
	if f.ParentID != "" && (byPosition || f.WorkflowID != "") {
		add("parent_id = ?", f.ParentID)
	}
	if f.State != "" {
		add("state = ?", string(f.State))
	}
	if !f.IncludeArchived {
		add("archived_at IS NULL")
	}
	order := "created_at, id"
	if byPosition {
		order = "position, id"
	}
	if p.Cursor != "" {
		after, err := taskCursorArgs(p.Cursor, byPosition)
		if err != nil {
			return "", nil, err
		}
		add("("+order+") > (?, ?)", after...)
	}
	query := `SELECT ` + taskCols + ` FROM tasks WHERE ` + strings.Join(where, " AND ") + ` ORDER BY ` + order + ` LIMIT ?`
	return query, append(args, p.Limit+1), nil
}

func taskCursorArgs(cursor string, byPosition bool) ([]any, error) {
	var id string
	if byPosition {
		var pos int64
		if err := decodeCursor(cursor, &pos, &id); err != nil {
			return nil, err
		}
		return []any{pos, id}, nil
	}
	var created string
	if err := decodeCursor(cursor, &created, &id); err != nil {
		return nil, err
	}
	return []any{created, id}, nil
}

// checkTaskFilterScope checks that the workspace exists and that the
// filter's workflow, step and parent belong to it.
func checkTaskFilterScope(ctx context.Context, q queryer, f kanban.TaskFilter) error {
	if err := requireRow(ctx, q, "workspaces", "workspace", f.WorkspaceID); err != nil {
		return err
	}
	if f.WorkflowStepID != "" {
		var wfID, wsID string
		err := q.QueryRowContext(ctx, `SELECT s.workflow_id, w.workspace_id FROM workflow_steps s
			JOIN workflows w ON w.id = s.workflow_id WHERE s.id = ?`, f.WorkflowStepID).Scan(&wfID, &wsID)
		if err != nil {
			return notFound(err, "workflow step")
		}
		if wsID != f.WorkspaceID || (f.WorkflowID != "" && wfID != f.WorkflowID) {
			return kanban.FieldError("workflow_step_id", "must be a step of the workspace's (and workflow's) board")
		}
	}
	if f.WorkflowID != "" {
		wf, err := getWorkflow(ctx, q, f.WorkflowID)
		if err != nil {
			return err
		}
		if wf.WorkspaceID != f.WorkspaceID {
			return kanban.FieldError("workflow_id", "must be a workflow of the workspace")
		}
	}
	if f.ParentID != "" {
		return checkParent(ctx, q, f.WorkspaceID, f.ParentID)
	}
	return nil
}

// ListBlockers returns the tasks taskID depends on, ordered by id.
func (s *Store) ListBlockers(ctx context.Context, taskID string, p kanban.Page) (*kanban.List[kanban.Task], error) {
	return s.listEdges(ctx, taskID, p, "task_id", "depends_on_task_id")
}

// ListBlocked returns the tasks that depend on taskID, ordered by id.
func (s *Store) ListBlocked(ctx context.Context, taskID string, p kanban.Page) (*kanban.List[kanban.Task], error) {
	return s.listEdges(ctx, taskID, p, "depends_on_task_id", "task_id")
}

// listEdges pages over the tasks at the other end (to) of taskID's edges,
// walking the primary key or idx_deps_reverse. from and to are column
// names from our own constants.
func (s *Store) listEdges(ctx context.Context, taskID string, p kanban.Page, from, to string) (*kanban.List[kanban.Task], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.db, "tasks", "task", taskID); err != nil {
		return nil, err
	}
	after := ""
	if p.Cursor != "" {
		if err := decodeCursor(p.Cursor, &after); err != nil {
			return nil, err
		}
	}
	query := `SELECT ` + taskColsT + ` FROM task_dependencies d JOIN tasks t ON t.id = d.` + to +
		` WHERE d.` + from + ` = ? AND d.` + to + ` > ? ORDER BY d.` + to + ` LIMIT ?`
	items, err := queryList(ctx, s.db, scanTask, query, taskID, after, p.Limit+1)
	if err != nil {
		return nil, fmt.Errorf("list dependencies: %w", err)
	}
	return page(items, p.Limit, func(t kanban.Task) []any { return []any{t.ID} }), nil
}

// taskWorkspace returns the workspace of task id, or NOT_FOUND with msg.
func taskWorkspace(ctx context.Context, q queryer, id, msg string) (string, error) {
	var ws string
	err := q.QueryRowContext(ctx, `SELECT workspace_id FROM tasks WHERE id = ?`, id).Scan(&ws)
	if errors.Is(err, sql.ErrNoRows) {
		return "", kanban.Errorf(kanban.CodeNotFound, "%s", msg)
	}
	if err != nil {
		return "", fmt.Errorf("task workspace: %w", err)
	}
	return ws, nil
}
