package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// AgentMode returns a task's agent mode: the zero mode when no automation
// set one (NOT_FOUND when the task does not exist).
func (s *Store) AgentMode(ctx context.Context, taskID string) (*kanban.AgentMode, error) {
	return agentMode(ctx, s.stmts, taskID)
}

func agentMode(ctx context.Context, q queryer, taskID string) (*kanban.AgentMode, error) {
	m := kanban.AgentMode{TaskID: taskID}
	var (
		plan    int
		updated string
	)
	err := q.QueryRowContext(ctx, `SELECT plan_mode, session_mode, reset_session_id, updated_at FROM task_agent_modes WHERE task_id = ?`,
		taskID).Scan(&plan, &m.SessionMode, &m.ResetSessionID, &updated)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		var one int
		if err := q.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ?`, taskID).Scan(&one); err != nil {
			return nil, notFound(err, "task")
		}
	case err != nil:
		return nil, fmt.Errorf("read agent mode: %w", err)
	}
	m.PlanMode = plan != 0
	if updated != "" {
		m.UpdatedAt = parseTime(updated)
	}
	return &m, nil
}

// UpdateAgentMode applies u to a task's agent mode in one transaction and
// returns the mode before and after (NOT_FOUND when the task does not
// exist).
func (s *Store) UpdateAgentMode(ctx context.Context, taskID string, u kanban.AgentModeUpdate) (before, after *kanban.AgentMode, err error) {
	err = s.tx(ctx, func(tx txn) error {
		if before, err = agentMode(ctx, tx, taskID); err != nil {
			return err
		}
		a := before.Apply(u)
		a.UpdatedAt = kanban.Now()
		after = &a
		return saveAgentMode(ctx, tx, a)
	})
	return before, after, err
}

func saveAgentMode(ctx context.Context, tx txn, m kanban.AgentMode) error {
	plan := 0
	if m.PlanMode {
		plan = 1
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_agent_modes (task_id, plan_mode, session_mode, reset_session_id, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET plan_mode = excluded.plan_mode,
		session_mode = excluded.session_mode, reset_session_id = excluded.reset_session_id, updated_at = excluded.updated_at`,
		m.TaskID, plan, m.SessionMode, m.ResetSessionID, fmtTime(m.UpdatedAt)); err != nil {
		return fmt.Errorf("save agent mode: %w", err)
	}
	return nil
}

// TakeReset clears the task's reset request when it names sessionID and
// reports whether it did.
func (s *Store) TakeReset(ctx context.Context, taskID, sessionID string) (bool, error) {
	var taken bool
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE task_agent_modes SET reset_session_id = '', updated_at = ?
			WHERE task_id = ? AND reset_session_id = ? AND reset_session_id <> ''`, fmtTime(kanban.Now()), taskID, sessionID)
		if err != nil {
			return fmt.Errorf("take reset: %w", err)
		}
		n, err := res.RowsAffected()
		taken = n == 1
		return err
	})
	return taken, err
}
