package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ListTasks lists tasks matching f; see kanban.TaskFilter for the orders.
// Every order is a keyset walk over an index (idx_tasks_step,
// idx_tasks_workflow_created, idx_tasks_parent, idx_tasks_workspace_created),
// so deep pages cost the same as the first.
func (s *Store) ListTasks(ctx context.Context, f kanban.TaskFilter, p kanban.Page) (*kanban.List[kanban.Task], error) {
	rows, err := taskPage(ctx, s, f, p, taskListing(f))
	return unwrapRows(rows, err, func(r taskRow) kanban.Task { return r.Task })
}

// taskRow is a listed task with its board-order key.
type taskRow struct {
	kanban.Task
	key int64
}

func scanTaskRow(r rowSource) (*taskRow, error) {
	var row taskRow
	return &row, scanTaskKeyed(r, &row.Task, &row.key)
}

// taskPage checks a task listing's filter and page and returns page p of
// l's rows matching f. A filter that names nothing but the workspace has
// the workspace checked only when its page comes back empty or fails: a
// task row proves its workspace exists (tasks.workspace_id references
// workspaces), so a page with tasks costs one statement, and the answers
// (NOT_FOUND for a missing workspace first) are those of checking first.
func taskPage[T any](ctx context.Context, s *Store, f kanban.TaskFilter, p kanban.Page, l listing[T]) (*kanban.List[T], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	onlyWorkspace := f.WorkflowStepID == "" && f.WorkflowID == "" && f.ParentID == ""
	if !onlyWorkspace {
		if err := checkTaskFilterScope(ctx, s.stmts, f); err != nil {
			return nil, err
		}
	}
	where, args := taskFilterWhere(f)
	out, err := l.page(ctx, s.stmts, p, where, args...)
	if onlyWorkspace && (err != nil || len(out.Items) == 0) {
		if werr := requireRow(ctx, s.stmts, "workspaces", "workspace", f.WorkspaceID); werr != nil {
			return nil, werr
		}
	}
	return out, err
}

// taskListing is the order of f's tasks: board order on a step, else
// creation order.
func taskListing(f kanban.TaskFilter) listing[taskRow] {
	return inOrder(f, tasksByPosition, tasksByCreation)
}

var (
	tasksByPosition = listing[taskRow]{what: "list tasks in board order", selectFrom: `SELECT ` + taskSelUnranked + ` FROM tasks t`,
		scan: scanTaskRow, cols: []string{"position", "id"}, key: func(r taskRow) []any { return []any{r.key, r.ID} },
		keys64: true, bound: taskRowJSONBound,
		ranks: func(r *taskRow) (string, int64, *int) { return r.WorkflowStepID, r.key, &r.Position }}
	tasksByCreation = listing[taskRow]{what: "list tasks in creation order", selectFrom: `SELECT ` + taskSelUnranked + ` FROM tasks t`,
		scan: scanTaskRow, cols: []string{"created_at", "id"}, key: func(r taskRow) []any { return []any{fmtTime(r.CreatedAt), r.ID} },
		bound: taskRowJSONBound, ranks: tasksByPosition.ranks}
)

func taskRowJSONBound(r taskRow) int { return taskJSONBound(r.Task) }

// taskJSONFixed bounds the JSON of a task apart from its strings: keys,
// quotes and punctuation (under 450 bytes), the position (20), the two
// flags (5 each) and five times (37 each).
const taskJSONFixed = 690

// taskJSONBound bounds the size of t's JSON encoding from above
// (TestTaskJSONBound): a byte of a string takes at most 6 bytes escaped
// (\u00XX). A time that JSON cannot encode gets an unbounded size, so the
// page is measured (and refused) exactly as without a bound.
func taskJSONBound(t kanban.Task) int {
	for _, tm := range []*time.Time{&t.CreatedAt, &t.UpdatedAt, t.ArchivedAt, t.QueuedAt, &t.StepEnteredAt} {
		if tm != nil && (tm.Year() < 0 || tm.Year() > 9999) {
			return PageBudget + 1
		}
	}
	return 6*(len(t.ID)+len(t.WorkspaceID)+len(t.WorkflowID)+len(t.WorkflowStepID)+len(t.ParentID)+len(t.Title)+
		len(t.Description)+len(t.State)+len(t.ExternalID)+len(t.LaunchPrompt)+len(t.QueuedForStepID)+len(t.WorkspaceMode)+
		len(t.CreatedByTaskID)+len(t.AgentProfileID)+len(t.ExecutorProfileID)) +
		taskJSONFixed
}

// taskFilterWhere returns the conditions of a checked filter. The first
// condition picks the index; the scope checks made the workspace condition
// implied by it.
func taskFilterWhere(f kanban.TaskFilter) (string, []any) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, a ...any) {
		where, args = append(where, cond), append(args, a...)
	}
	switch {
	case f.WorkflowStepID != "":
		add("workflow_step_id = ?", f.WorkflowStepID)
	case f.WorkflowID != "":
		add("workflow_id = ?", f.WorkflowID)
	case f.ParentID != "":
		add("parent_id = ?", f.ParentID)
	default:
		add("workspace_id = ?", f.WorkspaceID)
	}
	if f.ParentID != "" && (f.WorkflowStepID != "" || f.WorkflowID != "") {
		add("parent_id = ?", f.ParentID)
	}
	if f.State != "" {
		add("state = ?", string(f.State))
	}
	if !f.IncludeArchived {
		add("archived_at IS NULL")
	}
	return strings.Join(where, " AND "), args
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
	if err := requireRow(ctx, s.stmts, "tasks", "task", taskID); err != nil {
		return nil, err
	}
	edges := listing[kanban.Task]{what: "list dependencies",
		selectFrom: `SELECT ` + taskSelT + ` FROM task_dependencies d JOIN tasks t ON t.id = d.` + to,
		scan:       scanTask, cols: []string{"d." + to}, key: func(t kanban.Task) []any { return []any{t.ID} }}
	return edges.page(ctx, s.stmts, p, `d.`+from+` = ?`, taskID)
}

// taskWorkspaceOf returns the workspace of a task, NOT_FOUND when the task
// does not exist.
func taskWorkspaceOf(ctx context.Context, q queryer, taskID string) (string, error) {
	return taskWorkspace(ctx, q, taskID, "task not found")
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
