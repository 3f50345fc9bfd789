package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// RecordUsage adds one turn's report to its session's totals and turn
// rows in one transaction: the turn's cost is the growth of the agent's
// cumulative cost since the last report of the same ACP session (all of
// it in a new one), at most kanban.MaxTurnCostMicros; turn rows past the
// newest kanban.MaxUsageTurnRows are deleted (the totals keep them). The
// budget alerts the turn fired are recorded in the same transaction and
// returned in the totals' Alerts (see fireBudgetAlerts). A
// session's turns are recorded one at a time, by its run. NOT_FOUND when
// the session does not exist.
func (s *Store) RecordUsage(ctx context.Context, r kanban.UsageReport) (*kanban.SessionUsage, error) {
	r, _ = r.Clamp()
	var out *kanban.SessionUsage
	err := s.tx(ctx, func(tx txn) error {
		sess, err := getSession(ctx, tx, r.SessionID)
		if err != nil {
			return err
		}
		now := fmtTime(kanban.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_usage (session_id, task_id, workspace_id, updated_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING`, sess.ID, sess.TaskID, sess.WorkspaceID, now); err != nil {
			return fmt.Errorf("record usage: %w", err)
		}
		var prev usageState
		if err := tx.QueryRowContext(ctx, `SELECT turns, currency, context_used, context_size, agent_session_id, agent_cost_micros
			FROM session_usage WHERE session_id = ?`, sess.ID).Scan(&prev.turns, &prev.currency, &prev.used, &prev.size,
			&prev.agentSID, &prev.agentCost); err != nil {
			return fmt.Errorf("record usage: %w", err)
		}
		next, turnCost := prev.apply(r)
		t := r.Tokens
		if _, err := tx.ExecContext(ctx, `UPDATE session_usage SET turns = ?, input_tokens = input_tokens + ?,
			output_tokens = output_tokens + ?, cached_read_tokens = cached_read_tokens + ?, cached_write_tokens = cached_write_tokens + ?,
			thought_tokens = thought_tokens + ?, cost_micros = cost_micros + ?, currency = ?, context_used = ?, context_size = ?,
			agent_session_id = ?, agent_cost_micros = ?, updated_at = ? WHERE session_id = ?`,
			next.turns, t.Input, t.Output, t.CachedRead, t.CachedWrite, t.Thought, turnCost, next.currency, next.used, next.size,
			next.agentSID, next.agentCost, now, sess.ID); err != nil {
			return fmt.Errorf("record usage: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_usage_turns (session_id, seq, input_tokens, output_tokens,
			cached_read_tokens, cached_write_tokens, thought_tokens, cost_micros, currency, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, sess.ID, next.turns, t.Input, t.Output, t.CachedRead, t.CachedWrite, t.Thought,
			turnCost, next.currency, now); err != nil {
			return fmt.Errorf("record usage: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM session_usage_turns WHERE session_id = ? AND seq <= ?`,
			sess.ID, next.turns-kanban.MaxUsageTurnRows); err != nil {
			return fmt.Errorf("fold usage turns: %w", err)
		}
		alerts, err := fireBudgetAlerts(ctx, tx, sess)
		if err != nil {
			return err
		}
		if out, err = sessionUsage(ctx, tx, sess); err != nil {
			return err
		}
		out.Alerts = alerts
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// usageState is what a session's next report is added to.
type usageState struct {
	turns      int
	currency   string
	used, size int64
	agentSID   string
	agentCost  int64
}

// apply returns the state after report r and the turn's cost.
func (p usageState) apply(r kanban.UsageReport) (next usageState, turnCost int64) {
	next = p
	next.turns++
	if r.ContextUsed > 0 || r.ContextSize > 0 {
		next.used, next.size = r.ContextUsed, r.ContextSize
	}
	if r.Cost == nil {
		return next, 0
	}
	cum := kanban.CostMicros(r.Cost.Amount)
	turnCost = cum
	if r.AgentSessionID == p.agentSID && cum >= p.agentCost {
		turnCost = cum - p.agentCost
	}
	next.agentSID, next.agentCost = r.AgentSessionID, cum
	if r.Cost.Currency != "" {
		next.currency = r.Cost.Currency
	}
	return next, min(turnCost, kanban.MaxTurnCostMicros)
}

const sessionUsageColumns = `turns, input_tokens, output_tokens, cached_read_tokens, cached_write_tokens,
	thought_tokens, cost_micros, currency, context_used, context_size, updated_at`

// sessionUsage reads sess's totals: zero when it recorded none.
func sessionUsage(ctx context.Context, q queryer, sess *kanban.Session) (*kanban.SessionUsage, error) {
	u := kanban.SessionUsage{SessionID: sess.ID, TaskID: sess.TaskID, WorkspaceID: sess.WorkspaceID}
	var (
		micros  int64
		updated string
	)
	err := q.QueryRowContext(ctx, `SELECT `+sessionUsageColumns+` FROM session_usage WHERE session_id = ?`, sess.ID).Scan(
		&u.Turns, &u.Input, &u.Output, &u.CachedRead, &u.CachedWrite, &u.Thought, &micros, &u.Cost.Currency,
		&u.ContextUsed, &u.ContextSize, &updated)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return &u, nil
	case err != nil:
		return nil, fmt.Errorf("read session usage: %w", err)
	}
	u.Cost.Amount, u.UpdatedAt = kanban.CostAmount(micros), parseTime(updated)
	return &u, nil
}

// SessionUsage returns a session's totals and a page of its turn rows,
// newest first (NOT_FOUND when the session does not exist).
func (s *Store) SessionUsage(ctx context.Context, sessionID string, p kanban.Page) (*kanban.SessionUsage, *kanban.List[kanban.TurnUsage], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, nil, err
	}
	sess, err := getSession(ctx, s.stmts, sessionID)
	if err != nil {
		return nil, nil, err
	}
	u, err := sessionUsage(ctx, s.stmts, sess)
	if err != nil {
		return nil, nil, err
	}
	turns, err := turnUsageListing.page(ctx, s.stmts, p, `session_id = ?`, sessionID)
	if err != nil {
		return nil, nil, err
	}
	return u, turns, nil
}

var turnUsageListing = listing[kanban.TurnUsage]{what: "list usage turns",
	selectFrom: `SELECT session_id, seq, input_tokens, output_tokens, cached_read_tokens, cached_write_tokens, thought_tokens,
		cost_micros, currency, created_at FROM session_usage_turns`,
	scan: func(r rowSource) (*kanban.TurnUsage, error) {
		var (
			t       kanban.TurnUsage
			micros  int64
			created string
		)
		if err := r.Scan(&t.SessionID, &t.Seq, &t.Input, &t.Output, &t.CachedRead, &t.CachedWrite, &t.Thought,
			&micros, &t.Cost.Currency, &created); err != nil {
			return nil, err
		}
		t.Cost.Amount, t.CreatedAt = kanban.CostAmount(micros), parseTime(created)
		return &t, nil
	},
	cols:  []string{"seq"},
	desc:  true,
	key:   func(x kanban.TurnUsage) []any { return []any{x.Seq} },
	bound: func(kanban.TurnUsage) int { return 512 },
}

// UsageOf returns the totals of the sessions of ids that recorded usage,
// by session id, in one query (the primary key's index); at most
// kanban.MaxLimit ids.
func (s *Store) UsageOf(ctx context.Context, ids []string) (map[string]*kanban.SessionUsage, error) {
	out := map[string]*kanban.SessionUsage{}
	if len(ids) == 0 {
		return out, nil
	}
	if len(ids) > kanban.MaxLimit {
		return nil, kanban.FieldError("ids", "at most %d sessions", kanban.MaxLimit)
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.stmts.QueryContext(ctx, `SELECT session_id, task_id, workspace_id, `+sessionUsageColumns+` FROM session_usage
		WHERE session_id IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read sessions' usage: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var (
			u       kanban.SessionUsage
			micros  int64
			updated string
		)
		if err := rows.Scan(&u.SessionID, &u.TaskID, &u.WorkspaceID, &u.Turns, &u.Input, &u.Output, &u.CachedRead, &u.CachedWrite,
			&u.Thought, &micros, &u.Cost.Currency, &u.ContextUsed, &u.ContextSize, &updated); err != nil {
			return nil, fmt.Errorf("read sessions' usage: %w", err)
		}
		u.Cost.Amount, u.UpdatedAt = kanban.CostAmount(micros), parseTime(updated)
		out[u.SessionID] = &u
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sessions' usage: %w", err)
	}
	return out, nil
}

// TaskUsage sums the usage of a task's sessions (NOT_FOUND when the task
// does not exist).
func (s *Store) TaskUsage(ctx context.Context, taskID string) (*kanban.UsageTotals, error) {
	var one int
	if err := s.stmts.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ?`, taskID).Scan(&one); err != nil {
		return nil, notFound(err, "task")
	}
	return usageTotals(ctx, s.stmts, `task_id = ?`, taskID)
}

// WorkspaceUsage sums the usage of a workspace's sessions (NOT_FOUND when
// the workspace does not exist).
func (s *Store) WorkspaceUsage(ctx context.Context, workspaceID string) (*kanban.UsageTotals, error) {
	var one int
	if err := s.stmts.QueryRowContext(ctx, `SELECT 1 FROM workspaces WHERE id = ?`, workspaceID).Scan(&one); err != nil {
		return nil, notFound(err, "workspace")
	}
	return usageTotals(ctx, s.stmts, `workspace_id = ?`, workspaceID)
}

// usageTotals sums the session_usage rows matching where (one indexed
// query, one row per currency).
func usageTotals(ctx context.Context, q queryer, where string, arg string) (*kanban.UsageTotals, error) {
	rows, err := q.QueryContext(ctx, usageTotalsQuery(where), arg)
	if err != nil {
		return nil, fmt.Errorf("sum usage: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := &kanban.UsageTotals{Costs: []kanban.Cost{}}
	for rows.Next() {
		var (
			cur           string
			sessions      int
			turns, micros int64
			t             kanban.Tokens
		)
		if err := rows.Scan(&cur, &sessions, &turns, &t.Input, &t.Output, &t.CachedRead, &t.CachedWrite, &t.Thought, &micros); err != nil {
			return nil, fmt.Errorf("sum usage: %w", err)
		}
		out.Sessions += sessions
		out.Turns += int(turns)
		out.Tokens = out.Add(t)
		if micros > 0 || cur != "" {
			out.Costs = append(out.Costs, kanban.Cost{Amount: kanban.CostAmount(micros), Currency: cur})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sum usage: %w", err)
	}
	return out, nil
}

// usageTotalsQuery sums session_usage rows matching where, per currency.
func usageTotalsQuery(where string) string {
	return `SELECT currency, COUNT(*), CAST(SUM(turns) AS BIGINT), CAST(SUM(input_tokens) AS BIGINT),
		CAST(SUM(output_tokens) AS BIGINT), CAST(SUM(cached_read_tokens) AS BIGINT), CAST(SUM(cached_write_tokens) AS BIGINT),
		CAST(SUM(thought_tokens) AS BIGINT), CAST(SUM(cost_micros) AS BIGINT) FROM session_usage WHERE ` + where + `
		GROUP BY currency ORDER BY currency`
}
