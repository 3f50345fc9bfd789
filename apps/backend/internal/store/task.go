package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// taskCols lists the tasks columns in insert order (position is the
// task's sparse key, see task_position.go).
const taskCols = `id, workspace_id, workflow_id, workflow_step_id, parent_id, title, description, state,
	position, external_id, start_when_unblocked, launch_prompt, archived_at, created_at, updated_at,
	queued_for_step_id, queued_at, step_entered_at, autopilot, workspace_mode, created_by_task_id`

// taskSel and taskSelT are what a SELECT of tasks reads (scanTask order),
// from tasks (taskSel) or tasks aliased t (taskSelT): the columns, the
// rank in its step in place of the key, the profiles kept with the task
// (task_start_profiles, by its primary key), then the key. taskSelUnranked
// reads 0 for the rank, which a board-order page fills in (fillRanks).
var (
	taskSel         = taskSelOf("tasks", rankOf("tasks"))
	taskSelT        = taskSelOf("t", rankOf("t"))
	taskSelUnranked = taskSelOf("t", "0")
)

func taskSelOf(a, rank string) string {
	return a + `.id, ` + a + `.workspace_id, ` + a + `.workflow_id, ` + a + `.workflow_step_id, ` + a + `.parent_id, ` +
		a + `.title, ` + a + `.description, ` + a + `.state, ` + rank + `, ` + a + `.external_id, ` +
		a + `.start_when_unblocked, ` + a + `.launch_prompt, ` + a + `.archived_at, ` + a + `.created_at, ` + a + `.updated_at, ` +
		a + `.queued_for_step_id, ` + a + `.queued_at, ` + a + `.step_entered_at, ` + a + `.autopilot, ` + a + `.workspace_mode, ` +
		a + `.created_by_task_id,
	(SELECT sp.agent_profile_id FROM task_start_profiles sp WHERE sp.task_id = ` + a + `.id),
	(SELECT sp.executor_profile_id FROM task_start_profiles sp WHERE sp.task_id = ` + a + `.id), ` + a + `.position`
}

func scanTask(r rowSource) (*kanban.Task, error) {
	var t kanban.Task
	if err := scanTaskInto(r, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// scanTaskInto scans the taskSel columns of a row into t, then the row's
// further columns into extra.
func scanTaskInto(r rowSource, t *kanban.Task, extra ...any) error {
	var key int64
	return scanTaskKeyed(r, t, &key, extra...)
}

// scanTaskKeyed is scanTaskInto that keeps the task's key.
func scanTaskKeyed(r rowSource, t *kanban.Task, key *int64, extra ...any) error {
	var parent, ext, archived, queuedFor, queuedAt, creator, agent, executor sql.NullString
	var start, autopilot int
	var created, updated, entered string
	if err := r.Scan(append([]any{&t.ID, &t.WorkspaceID, &t.WorkflowID, &t.WorkflowStepID, &parent, &t.Title,
		&t.Description, &t.State, &t.Position, &ext, &start, &t.LaunchPrompt,
		&archived, &created, &updated, &queuedFor, &queuedAt, &entered, &autopilot, &t.WorkspaceMode, &creator, &agent, &executor, key}, extra...)...); err != nil {
		return err
	}
	t.AgentProfileID, t.ExecutorProfileID = agent.String, executor.String
	t.Autopilot = autopilot != 0
	t.QueuedForStepID, t.QueuedAt = queuedFor.String, parseTimePtr(queuedAt)
	if entered != "" {
		t.StepEnteredAt = parseTime(entered)
	}
	t.ParentID, t.ExternalID, t.StartWhenUnblocked = parent.String, ext.String, start != 0
	t.CreatedByTaskID = creator.String
	t.ArchivedAt = parseTimePtr(archived)
	t.CreatedAt, t.UpdatedAt = parseTime(created), parseTime(updated)
	return nil
}

func getTask(ctx context.Context, q queryer, id string) (*kanban.Task, error) {
	t, err := scanTask(q.QueryRowContext(ctx, `SELECT `+taskSel+` FROM tasks WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "task")
	}
	return t, nil
}

// GetTask returns a task (NOT_FOUND when missing).
func (s *Store) GetTask(ctx context.Context, id string) (*kanban.Task, error) {
	return getTask(ctx, s.stmts, id)
}

// CreateTask creates a task; see kanban.TaskService. With an ExternalID
// already used in the workspace it returns that task, deduplicated, and
// writes nothing.
func (s *Store) CreateTask(ctx context.Context, in kanban.TaskCreate) (*kanban.Task, bool, error) {
	t, _, dedup, err := s.createTask(ctx, in, nil)
	return t, dedup, err
}

// CreateTaskWithSession creates a task and a session for it in one
// transaction; see kanban.TaskService.
func (s *Store) CreateTaskWithSession(ctx context.Context, in kanban.TaskCreate, sc kanban.SessionCreate) (*kanban.Task, *kanban.Session, bool, error) {
	return s.createTask(ctx, in, &sc)
}

// createTask creates a task and, when sc is not nil and the task is new, a
// session for it, in one transaction.
func (s *Store) createTask(ctx context.Context, in kanban.TaskCreate, sc *kanban.SessionCreate) (*kanban.Task, *kanban.Session, bool, error) {
	if in.State == "" {
		in.State = kanban.TaskTodo
	}
	if err := in.Check(); err != nil {
		return nil, nil, false, err
	}
	var hash string
	if sc != nil {
		if err := checkSessionCreate(sc); err != nil {
			return nil, nil, false, err
		}
		_, hash = newSessionToken()
	}
	var (
		out   *kanban.Task
		sess  *kanban.Session
		dedup bool
	)
	err := s.tx(ctx, func(tx txn) error {
		var err error
		if out, dedup, err = createTaskIn(ctx, tx, in); err != nil || dedup || sc == nil {
			return err
		}
		sc.TaskID = out.ID
		sess, err = createSession(ctx, tx, *sc, hash, out)
		return err
	})
	if err != nil && in.ExternalID != "" && isUniqueConstraint(err) {
		// Another writer took the external id between our read and insert.
		if t, rerr := taskByExternalID(ctx, s.stmts, in.WorkspaceID, in.ExternalID); rerr == nil {
			return t, nil, true, nil
		}
	}
	if err != nil {
		return nil, nil, false, err
	}
	return out, sess, dedup, nil
}

// createTaskIn creates a checked task in tx, or returns the task with its
// external id, deduplicated.
func createTaskIn(ctx context.Context, tx txn, in kanban.TaskCreate) (*kanban.Task, bool, error) {
	// A task placed by default has its workspace checked by the placement
	// (defaultPlacement, the first statement of insertTask).
	if in.ExternalID != "" || in.WorkflowID != "" || in.WorkflowStepID != "" {
		if err := requireRow(ctx, tx, "workspaces", "workspace", in.WorkspaceID); err != nil {
			return nil, false, err
		}
	}
	if in.ExternalID != "" {
		t, err := taskByExternalID(ctx, tx, in.WorkspaceID, in.ExternalID)
		if err == nil {
			return t, true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, false, fmt.Errorf("create task: %w", err)
		}
	}
	t, err := insertTask(ctx, tx, in)
	return t, false, err
}

func taskByExternalID(ctx context.Context, q queryer, workspaceID, externalID string) (*kanban.Task, error) {
	return scanTask(q.QueryRowContext(ctx, `SELECT `+taskSel+` FROM tasks WHERE workspace_id = ? AND external_id = ?`,
		workspaceID, externalID))
}

func insertTask(ctx context.Context, tx txn, in kanban.TaskCreate) (*kanban.Task, error) {
	if err := resolvePlacement(ctx, tx, &in); err != nil {
		return nil, err
	}
	if err := checkParent(ctx, tx, in.WorkspaceID, in.ParentID); err != nil {
		return nil, err
	}
	now := kanban.Now()
	t := &kanban.Task{ID: kanban.NewID(), WorkspaceID: in.WorkspaceID, WorkflowID: in.WorkflowID,
		WorkflowStepID: in.WorkflowStepID, ParentID: in.ParentID, Title: in.Title, Description: in.Description,
		State: in.State, ExternalID: in.ExternalID, StartWhenUnblocked: in.StartWhenUnblocked,
		Autopilot: in.Autopilot, WorkspaceMode: in.WorkspaceMode, CreatedByTaskID: in.CreatedByTaskID, CreatedAt: now, UpdatedAt: now,
		AgentProfileID: in.StartAgentProfileID, ExecutorProfileID: in.StartExecutorProfileID}
	t.StepEnteredAt = now
	// The task goes last on its step: its key, past the step's last, is
	// computed in the insert, which returns its rank.
	err := tx.QueryRowContext(ctx, `INSERT INTO tasks (`+taskCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?,
		(SELECT COALESCE(MAX(position), 0) + ? FROM tasks WHERE workflow_step_id = ?),
		?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?) RETURNING `+rankOf("tasks"),
		t.ID, t.WorkspaceID, t.WorkflowID, t.WorkflowStepID, nullString(t.ParentID), t.Title, t.Description,
		string(t.State), int64(keyGap), t.WorkflowStepID, nullString(t.ExternalID), boolInt(t.StartWhenUnblocked), t.LaunchPrompt,
		nil, fmtTime(now), fmtTime(now), fmtTime(now), boolInt(t.Autopilot), t.WorkspaceMode, nullString(t.CreatedByTaskID)).Scan(&t.Position)
	if err != nil {
		return nil, fmt.Errorf("create task: %w", err)
	}
	for _, dep := range in.BlockedBy {
		if err := addBlocker(ctx, tx, t, dep); err != nil {
			return nil, err
		}
	}
	if err := attachNewTaskRepo(ctx, tx, t, in.Repository); err != nil {
		return nil, err
	}
	if in.StartAgentProfileID != "" || in.StartExecutorProfileID != "" {
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_start_profiles (task_id, agent_profile_id, executor_profile_id)
			VALUES (?, ?, ?)`, t.ID, nullString(in.StartAgentProfileID), nullString(in.StartExecutorProfileID)); err != nil {
			return nil, fmt.Errorf("create task: start profiles: %w", err)
		}
	}
	return t, nil
}

// StartProfiles returns the profiles a task was created with (empty when
// none were named, or when they were deleted since).
func (s *Store) StartProfiles(ctx context.Context, taskID string) (string, string, error) {
	var agent, executor sql.NullString
	err := s.stmts.QueryRowContext(ctx, `SELECT agent_profile_id, executor_profile_id FROM task_start_profiles WHERE task_id = ?`,
		taskID).Scan(&agent, &executor)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("start profiles: %w", err)
	}
	return agent.String, executor.String, nil
}

// resolvePlacement fills in.WorkflowID and in.WorkflowStepID: the step's
// workflow, else the workspace's first workflow; the workflow's start step.
func resolvePlacement(ctx context.Context, tx txn, in *kanban.TaskCreate) error {
	if in.WorkflowStepID != "" {
		st, err := getStep(ctx, tx, in.WorkflowStepID)
		if err != nil {
			return err
		}
		if in.WorkflowID != "" && st.WorkflowID != in.WorkflowID {
			return kanban.FieldError("workflow_step_id", "must be a step of the workflow")
		}
		in.WorkflowID = st.WorkflowID
	}
	if in.WorkflowID == "" {
		return defaultPlacement(ctx, tx, in)
	}
	wf, err := getWorkflow(ctx, tx, in.WorkflowID)
	if err != nil {
		return err
	}
	if wf.WorkspaceID != in.WorkspaceID {
		return kanban.FieldError("workflow_id", "must be a workflow of the workspace")
	}
	if in.WorkflowStepID != "" {
		return nil
	}
	err = tx.QueryRowContext(ctx, `SELECT id FROM workflow_steps WHERE workflow_id = ?
		ORDER BY is_start_step DESC, position, id LIMIT 1`, in.WorkflowID).Scan(&in.WorkflowStepID)
	if errors.Is(err, sql.ErrNoRows) {
		return kanban.Errorf(kanban.CodeNotFound, "workflow has no steps")
	}
	if err != nil {
		return fmt.Errorf("resolve step: %w", err)
	}
	return nil
}

// defaultPlacement checks that in's workspace exists and fills
// in.WorkflowID and in.WorkflowStepID with its first workflow and that
// workflow's start step, all read in one statement (the workflow is the
// workspace's by construction).
func defaultPlacement(ctx context.Context, tx txn, in *kanban.TaskCreate) error {
	var wf, step sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT w.id, (SELECT s.id FROM workflow_steps s WHERE s.workflow_id = w.id
		ORDER BY s.is_start_step DESC, s.position, s.id LIMIT 1)
		FROM workspaces ws LEFT JOIN workflows w ON w.id = (SELECT f.id FROM workflows f WHERE f.workspace_id = ws.id
		ORDER BY f.sort_order, f.id LIMIT 1)
		WHERE ws.id = ?`, in.WorkspaceID).Scan(&wf, &step)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return kanban.NotFound("workspace")
	case err != nil:
		return fmt.Errorf("resolve workflow: %w", err)
	case !wf.Valid:
		return kanban.Errorf(kanban.CodeNotFound, "workspace has no workflow")
	case !step.Valid:
		return kanban.Errorf(kanban.CodeNotFound, "workflow has no steps")
	}
	in.WorkflowID, in.WorkflowStepID = wf.String, step.String
	return nil
}

func checkParent(ctx context.Context, q queryer, workspaceID, parentID string) error {
	if parentID == "" {
		return nil
	}
	ws, err := taskWorkspace(ctx, q, parentID, "parent task not found")
	if err != nil {
		return err
	}
	if ws != workspaceID {
		return kanban.FieldError("parent_id", "parent task must be in the same workspace")
	}
	return nil
}

// UpdateTask changes the given fields of a task, validated as on create.
func (s *Store) UpdateTask(ctx context.Context, id string, u kanban.TaskUpdate) (*kanban.Task, error) {
	t, _, err := s.UpdateTaskFrom(ctx, id, u)
	return t, err
}

// UpdateTaskFrom is UpdateTask that also returns the task's state before
// the update, read in the same transaction.
func (s *Store) UpdateTaskFrom(ctx context.Context, id string, u kanban.TaskUpdate) (*kanban.Task, kanban.TaskState, error) {
	if err := u.Check(); err != nil {
		return nil, "", err
	}
	var out *kanban.Task
	var was kanban.TaskState
	err := s.tx(ctx, func(tx txn) error {
		t, err := getTask(ctx, tx, id)
		if err != nil {
			return err
		}
		was = t.State
		setIf(&t.Title, u.Title)
		setIf(&t.Description, u.Description)
		setIf(&t.State, u.State)
		setIf(&t.LaunchPrompt, u.LaunchPrompt)
		t.UpdatedAt = kanban.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET title = ?, description = ?, state = ?, launch_prompt = ?,
			updated_at = ? WHERE id = ?`, t.Title, t.Description, string(t.State), t.LaunchPrompt,
			fmtTime(t.UpdatedAt), id); err != nil {
			return fmt.Errorf("update task: %w", err)
		}
		if u.AgentProfileID != nil || u.ExecutorProfileID != nil {
			setIf(&t.AgentProfileID, u.AgentProfileID)
			setIf(&t.ExecutorProfileID, u.ExecutorProfileID)
			if err := keepStartProfiles(ctx, tx, t); err != nil {
				return err
			}
		}
		out = t
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return out, was, nil
}

// keepStartProfiles writes the profiles kept with t (none: no row).
func keepStartProfiles(ctx context.Context, tx txn, t *kanban.Task) error {
	if t.AgentProfileID == "" && t.ExecutorProfileID == "" {
		if _, err := tx.ExecContext(ctx, `DELETE FROM task_start_profiles WHERE task_id = ?`, t.ID); err != nil {
			return fmt.Errorf("update task: start profiles: %w", err)
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_start_profiles (task_id, agent_profile_id, executor_profile_id)
		VALUES (?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET agent_profile_id = excluded.agent_profile_id,
		executor_profile_id = excluded.executor_profile_id`,
		t.ID, nullString(t.AgentProfileID), nullString(t.ExecutorProfileID)); err != nil {
		return fmt.Errorf("update task: start profiles: %w", err)
	}
	return nil
}

// ArchiveTask archives a task; archiving an archived task keeps its first
// archived_at and succeeds.
func (s *Store) ArchiveTask(ctx context.Context, id string) (*kanban.Task, error) {
	var out *kanban.Task
	err := s.tx(ctx, func(tx txn) error {
		now := fmtTime(kanban.Now())
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET archived_at = ?, updated_at = ? WHERE id = ? AND archived_at IS NULL`,
			now, now, id); err != nil {
			return fmt.Errorf("archive task: %w", err)
		}
		var err error
		out, err = getTask(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteTask deletes a task; foreign keys cascade its sessions, messages,
// plans, documents, artifacts, edges and repository links, and detach its
// children; its budget goes with it. The step's remaining positions close the gap (they are ranks).
func (s *Store) DeleteTask(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx txn) error {
		if _, err := getTask(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete task: %w", err)
		}
		return dropBudgets(ctx, tx, kanban.BudgetTask, `scope_id = ?`, id)
	})
}
