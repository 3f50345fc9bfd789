package store

import (
	"context"
	"database/sql"
	"strconv"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The items of task.list: the tasks ListTasks lists, in the same orders
// and with the same cursors (each listing keeps ListTasks' cursor tag), as
// summaries or full tasks, both with their counts.

// taskCountCols are the counts of kanban.TaskCounts for the row t: live
// subtasks (idx_tasks_parent) and blockers not yet completed (the
// dependencies' primary key, then each blocker by id).
const taskCountCols = `(SELECT COUNT(*) FROM tasks c WHERE c.parent_id = t.id AND c.archived_at IS NULL),
	(SELECT COUNT(*) FROM task_dependencies d JOIN tasks b ON b.id = d.depends_on_task_id
	 WHERE d.task_id = t.id AND b.state <> 'COMPLETED')`

// taskSummaryColsUnranked read a summary: one character more of the
// description than a preview shows, so that a cut can be told from a fit
// without reading (or copying) the rest of it. The position reads 0: a
// listed page fills it in (fillRanks).
var taskSummaryColsUnranked = `t.id, t.workflow_step_id, t.parent_id, t.title, t.state, 0, t.position,
	substr(t.description, 1, ` + strconv.Itoa(kanban.PreviewLen+1) + `), t.archived_at, t.queued_for_step_id, t.queued_at,
	t.created_at, (SELECT sp.agent_profile_id FROM task_start_profiles sp WHERE sp.task_id = t.id), ` + taskCountCols

// summaryRow is a summary with its creation-order and board-order keys.
type summaryRow struct {
	kanban.TaskSummary
	created string
	key     int64
}

func scanSummary(r rowSource) (*summaryRow, error) {
	var row summaryRow
	t := &row.TaskSummary
	var parent, archived, queuedFor, queuedAt, agent sql.NullString
	if err := r.Scan(&t.ID, &t.WorkflowStepID, &parent, &t.Title, &t.State, &t.Position, &row.key, &t.Description,
		&archived, &queuedFor, &queuedAt, &row.created, &agent, &t.Subtasks, &t.OpenBlockers); err != nil {
		return nil, err
	}
	t.AgentProfileID = agent.String
	t.ParentID, t.ArchivedAt = parent.String, parseTimePtr(archived)
	t.QueuedForStepID, t.QueuedAt = queuedFor.String, parseTimePtr(queuedAt)
	t.Description, t.DescriptionTruncated = kanban.Preview(t.Description, kanban.PreviewLen)
	return &row, nil
}

// detailRow is a task detail with its board-order key.
type detailRow struct {
	kanban.TaskDetail
	key int64
}

func scanDetail(r rowSource) (*detailRow, error) {
	var d detailRow
	if err := scanTaskKeyed(r, &d.Task, &d.key, &d.Subtasks, &d.OpenBlockers); err != nil {
		return nil, err
	}
	return &d, nil
}

// summaryJSONBound bounds a summary's JSON size from above, as
// taskJSONBound does for a task: keys and punctuation (under 270 bytes),
// the position and counts (60), two times (37 each).
func summaryJSONBound(r summaryRow) int {
	t := r.TaskSummary
	return 6*(len(t.ID)+len(t.WorkflowStepID)+len(t.ParentID)+len(t.Title)+len(t.State)+len(t.Description)+len(t.QueuedForStepID)+
		len(t.AgentProfileID)) + 420
}

// detailJSONBound is taskJSONBound plus the counts.
func detailJSONBound(d detailRow) int { return taskJSONBound(d.Task) + 60 }

var (
	summariesByPosition = listing[summaryRow]{what: tasksByPosition.what, selectFrom: `SELECT ` + taskSummaryColsUnranked + ` FROM tasks t`,
		scan: scanSummary, cols: tasksByPosition.cols, key: func(r summaryRow) []any { return []any{r.key, r.ID} },
		keys64: true, bound: summaryJSONBound,
		ranks: func(r *summaryRow) (string, int64, *int) { return r.WorkflowStepID, r.key, &r.Position }}
	summariesByCreation = listing[summaryRow]{what: tasksByCreation.what, selectFrom: `SELECT ` + taskSummaryColsUnranked + ` FROM tasks t`,
		scan: scanSummary, cols: tasksByCreation.cols, key: func(r summaryRow) []any { return []any{r.created, r.ID} },
		bound: summaryJSONBound, ranks: summariesByPosition.ranks}
	detailsByPosition = listing[detailRow]{what: tasksByPosition.what, selectFrom: `SELECT ` + taskSelUnranked + `, ` + taskCountCols + ` FROM tasks t`,
		scan: scanDetail, cols: tasksByPosition.cols, key: func(d detailRow) []any { return []any{d.key, d.ID} },
		keys64: true, bound: detailJSONBound,
		ranks: func(d *detailRow) (string, int64, *int) { return d.WorkflowStepID, d.key, &d.Position }}
	detailsByCreation = listing[detailRow]{what: tasksByCreation.what, selectFrom: `SELECT ` + taskSelUnranked + `, ` + taskCountCols + ` FROM tasks t`,
		scan: scanDetail, cols: tasksByCreation.cols, key: func(d detailRow) []any { return tasksByCreation.key(taskRow{Task: d.Task}) },
		bound: detailJSONBound, ranks: detailsByPosition.ranks}
)

// ListTaskSummaries lists tasks as ListTasks does, as summaries with their
// counts.
func (s *Store) ListTaskSummaries(ctx context.Context, f kanban.TaskFilter, p kanban.Page) (*kanban.List[kanban.TaskSummary], error) {
	rows, err := taskPage(ctx, s, f, p, inOrder(f, summariesByPosition, summariesByCreation))
	return unwrapRows(rows, err, func(r summaryRow) kanban.TaskSummary { return r.TaskSummary })
}

// unwrapRows is a page of listed rows as a page of what each row holds.
func unwrapRows[R, T any](rows *kanban.List[R], err error, item func(R) T) (*kanban.List[T], error) {
	if err != nil {
		return nil, err
	}
	out := &kanban.List[T]{Items: make([]T, len(rows.Items)), NextCursor: rows.NextCursor}
	for i, r := range rows.Items {
		out.Items[i] = item(r)
	}
	return out, nil
}

// ListTaskDetails lists tasks as ListTasks does, with their counts.
func (s *Store) ListTaskDetails(ctx context.Context, f kanban.TaskFilter, p kanban.Page) (*kanban.List[kanban.TaskDetail], error) {
	rows, err := taskPage(ctx, s, f, p, inOrder(f, detailsByPosition, detailsByCreation))
	return unwrapRows(rows, err, func(r detailRow) kanban.TaskDetail { return r.TaskDetail })
}

// inOrder picks f's order, as taskListing does: board order on a step,
// else creation order.
func inOrder[T any](f kanban.TaskFilter, byPosition, byCreation listing[T]) listing[T] {
	if f.WorkflowStepID != "" {
		return byPosition
	}
	return byCreation
}
