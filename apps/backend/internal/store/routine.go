package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Routines (routines) and their runs (routine_runs).

const routineCols = `id, workspace_id, name, schedule, time_zone, target, title, prompt, workflow_id, workflow_step_id,
	agent_profile_id, executor_profile_id, start_agent, task_id, missed, enabled, next_run_at, last_run_at, last_task_id,
	created_at, updated_at`

func scanRoutine(r rowSource) (*kanban.Routine, error) {
	var (
		o                      kanban.Routine
		start, enabled         int
		next, created, updated string
		last                   sql.NullString
	)
	if err := r.Scan(&o.ID, &o.WorkspaceID, &o.Name, &o.Schedule, &o.TimeZone, &o.Target, &o.Title, &o.Prompt,
		&o.WorkflowID, &o.WorkflowStepID, &o.AgentProfileID, &o.ExecutorProfileID, &start, &o.TaskID, &o.Missed,
		&enabled, &next, &last, &o.LastTaskID, &created, &updated); err != nil {
		return nil, err
	}
	o.StartAgent, o.Enabled = start != 0, enabled != 0
	o.NextRunAt, o.LastRunAt = parseTime(next), parseTimePtr(last)
	o.CreatedAt, o.UpdatedAt = parseTime(created), parseTime(updated)
	return &o, nil
}

// CreateRoutine stores a new routine (validated by the caller, its next
// run set). CONFLICT when its workspace has MaxRoutinesPerWorkspace.
func (s *Store) CreateRoutine(ctx context.Context, r kanban.Routine) (*kanban.Routine, error) {
	r.ID = kanban.NewID()
	r.CreatedAt = kanban.Now()
	r.UpdatedAt, r.LastRunAt, r.LastTaskID = r.CreatedAt, nil, ""
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "workspaces", "workspace", r.WorkspaceID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM routines WHERE workspace_id = ?`, r.WorkspaceID).Scan(&n); err != nil {
			return err
		}
		if n >= kanban.MaxRoutinesPerWorkspace {
			return kanban.Errorf(kanban.CodeConflict, "the workspace has %d routines, the most it may have", n)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO routines (`+routineCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, '', ?, ?)`,
			r.ID, r.WorkspaceID, r.Name, r.Schedule, r.TimeZone, r.Target, r.Title, r.Prompt, r.WorkflowID, r.WorkflowStepID,
			r.AgentProfileID, r.ExecutorProfileID, boolInt(r.StartAgent), r.TaskID, r.Missed, boolInt(r.Enabled),
			fmtTime(r.NextRunAt), fmtTime(r.CreatedAt), fmtTime(r.UpdatedAt))
		return err
	})
	if err != nil {
		return nil, wrapKanban(err, "create routine")
	}
	return &r, nil
}

// ReplaceRoutine stores r's fields over its routine's; with reschedule
// its next run becomes r.NextRunAt, else the stored one is kept (a
// scheduler may have moved it meanwhile).
func (s *Store) ReplaceRoutine(ctx context.Context, r kanban.Routine, reschedule bool) (*kanban.Routine, error) {
	var out *kanban.Routine
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE routines SET name = ?, schedule = ?, time_zone = ?, target = ?, title = ?,
			prompt = ?, workflow_id = ?, workflow_step_id = ?, agent_profile_id = ?, executor_profile_id = ?, start_agent = ?,
			task_id = ?, missed = ?, enabled = ?, next_run_at = CASE WHEN ? = 1 THEN ? ELSE next_run_at END, updated_at = ?
			WHERE id = ?`,
			r.Name, r.Schedule, r.TimeZone, r.Target, r.Title, r.Prompt, r.WorkflowID, r.WorkflowStepID, r.AgentProfileID,
			r.ExecutorProfileID, boolInt(r.StartAgent), r.TaskID, r.Missed, boolInt(r.Enabled), boolInt(reschedule),
			fmtTime(r.NextRunAt), fmtTime(kanban.Now()), r.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return notFoundIfNone(err, "routine")
		}
		out, err = getRoutine(ctx, tx, r.ID)
		return err
	})
	if err != nil {
		return nil, wrapKanban(err, "update routine")
	}
	return out, nil
}

// GetRoutine returns a routine (NOT_FOUND when missing).
func (s *Store) GetRoutine(ctx context.Context, id string) (*kanban.Routine, error) {
	return getRoutine(ctx, s.stmts, id)
}

func getRoutine(ctx context.Context, q queryer, id string) (*kanban.Routine, error) {
	r, err := scanRoutine(q.QueryRowContext(ctx, `SELECT `+routineCols+` FROM routines WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "routine")
	}
	return r, nil
}

var routineListing = listing[kanban.Routine]{what: "list routines",
	selectFrom: `SELECT ` + routineCols + ` FROM routines`, scan: scanRoutine, cols: []string{"created_at", "id"},
	key: func(r kanban.Routine) []any { return []any{fmtTime(r.CreatedAt), r.ID} }}

// ListRoutines returns a page of a workspace's routines, oldest first
// (NOT_FOUND without the workspace).
func (s *Store) ListRoutines(ctx context.Context, workspaceID string, p kanban.Page) (*kanban.List[kanban.Routine], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "workspaces", "workspace", workspaceID); err != nil {
		return nil, err
	}
	return routineListing.page(ctx, s.stmts, p, `workspace_id = ?`, workspaceID)
}

// DeleteRoutine deletes a routine and its runs (NOT_FOUND when missing).
func (s *Store) DeleteRoutine(ctx context.Context, id string) error {
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM routines WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return notFoundIfNone(err, "routine")
		}
		return nil
	})
	return wrapKanban(err, "delete routine")
}

const runCols = `routine_id, scheduled_for, started_at, outcome, task_id, detail`

func scanRun(r rowSource) (*kanban.RoutineRun, error) {
	var (
		run            kanban.RoutineRun
		sched, started string
	)
	if err := r.Scan(&run.RoutineID, &sched, &started, &run.Outcome, &run.TaskID, &run.Detail); err != nil {
		return nil, err
	}
	run.ScheduledFor, run.StartedAt = parseTime(sched), parseTime(started)
	return &run, nil
}

var runListing = listing[kanban.RoutineRun]{what: "list routine runs",
	selectFrom: `SELECT ` + runCols + ` FROM routine_runs`, scan: scanRun, cols: []string{"scheduled_for"}, desc: true,
	key: func(r kanban.RoutineRun) []any { return []any{fmtTime(r.ScheduledFor)} }}

// ListRoutineRuns returns a page of a routine's runs, newest first
// (NOT_FOUND without the routine).
func (s *Store) ListRoutineRuns(ctx context.Context, routineID string, p kanban.Page) (*kanban.List[kanban.RoutineRun], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "routines", "routine", routineID); err != nil {
		return nil, err
	}
	return runListing.page(ctx, s.stmts, p, `routine_id = ?`, routineID)
}

// DueRoutines returns up to limit enabled routines whose next run is at
// or before now, the earliest first (one index range).
func (s *Store) DueRoutines(ctx context.Context, now time.Time, limit int) ([]kanban.Routine, error) {
	rows, err := scanAll(ctx, s.stmts, scanRoutine, `SELECT `+routineCols+` FROM routines
		WHERE enabled = 1 AND next_run_at <= ? ORDER BY next_run_at, id LIMIT ?`, fmtTime(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due routines: %w", err)
	}
	return rows, nil
}

// ClaimRoutineRun moves r's next run from r.NextRunAt (as read) to next
// and records run, in one transaction; false when another scheduler moved
// it first (or the routine was deleted, disabled or rescheduled), and
// then nothing is written. The routine's runs beyond MaxRoutineRuns, the
// oldest, are deleted.
func (s *Store) ClaimRoutineRun(ctx context.Context, r *kanban.Routine, next time.Time, run kanban.RoutineRun) (bool, error) {
	claimed := false
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE routines SET next_run_at = ?, last_run_at = ?
			WHERE id = ? AND next_run_at = ? AND enabled = 1`,
			fmtTime(next), fmtTime(run.StartedAt), r.ID, fmtTime(r.NextRunAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO routine_runs (`+runCols+`) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (routine_id, scheduled_for) DO NOTHING`,
			r.ID, fmtTime(run.ScheduledFor), fmtTime(run.StartedAt), run.Outcome, run.TaskID, run.Detail); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM routine_runs WHERE routine_id = ? AND scheduled_for <
			(SELECT scheduled_for FROM routine_runs WHERE routine_id = ? ORDER BY scheduled_for DESC LIMIT 1 OFFSET ?)`,
			r.ID, r.ID, kanban.MaxRoutineRuns-1); err != nil {
			return err
		}
		claimed = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("claim routine run: %w", err)
	}
	return claimed, nil
}

// FinishRoutineRun records what came of a claimed run; a run with a task
// makes it the routine's last task.
func (s *Store) FinishRoutineRun(ctx context.Context, run kanban.RoutineRun) error {
	err := s.tx(ctx, func(tx txn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE routine_runs SET outcome = ?, task_id = ?, detail = ?
			WHERE routine_id = ? AND scheduled_for = ?`,
			run.Outcome, run.TaskID, run.Detail, run.RoutineID, fmtTime(run.ScheduledFor)); err != nil {
			return err
		}
		if run.TaskID == "" {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE routines SET last_task_id = ? WHERE id = ?`, run.TaskID, run.RoutineID)
		return err
	})
	if err != nil {
		return fmt.Errorf("finish routine run: %w", err)
	}
	return nil
}

// wrapKanban returns a kanban error as it is, any other with what.
func wrapKanban(err error, what string) error {
	if err == nil {
		return nil
	}
	if _, ok := kanban.AsError(err); ok {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}
