package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const budgetColumns = `scope, scope_id, token_limit, cost_limit_micros, currency, thresholds, revision, updated_at`

// SetBudget creates or replaces a scope's budget: a change of its limits
// or thresholds starts a new revision, whose alerts fire anew. NOT_FOUND
// when the scope's workspace, agent profile or task does not exist.
func (s *Store) SetBudget(ctx context.Context, in kanban.BudgetSet) (*kanban.Budget, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	var out *kanban.Budget
	err := s.tx(ctx, func(tx txn) error {
		if err := budgetScopeExists(ctx, tx, in.Scope, in.ScopeID); err != nil {
			return err
		}
		var micros int64
		cur := ""
		if in.CostLimit != nil {
			micros, cur = kanban.CostMicros(in.CostLimit.Amount), in.CostLimit.Currency
		}
		th := make([]string, len(in.Thresholds))
		for i, t := range in.Thresholds {
			th[i] = strconv.Itoa(t)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO budgets (`+budgetColumns+`) VALUES (?, ?, ?, ?, ?, ?, 1, ?)
			ON CONFLICT (scope, scope_id) DO UPDATE SET token_limit = excluded.token_limit,
			cost_limit_micros = excluded.cost_limit_micros, currency = excluded.currency, thresholds = excluded.thresholds,
			revision = budgets.revision + 1, updated_at = excluded.updated_at`,
			in.Scope, in.ScopeID, in.TokenLimit, micros, cur, strings.Join(th, ","), fmtTime(kanban.Now())); err != nil {
			return fmt.Errorf("set budget: %w", err)
		}
		b, err := getBudget(ctx, tx, in.Scope, in.ScopeID)
		if err != nil {
			return err
		}
		out = b
		return budgetSpend(ctx, tx, b)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// budgetScopeExists is NOT_FOUND when scope's entity does not exist.
func budgetScopeExists(ctx context.Context, q queryer, scope, id string) error {
	table := map[string]string{kanban.BudgetWorkspace: "workspaces", kanban.BudgetAgentProfile: "agent_profiles",
		kanban.BudgetTask: "tasks"}[scope]
	var one int
	if err := q.QueryRowContext(ctx, `SELECT 1 FROM `+table+` WHERE id = ?`, id).Scan(&one); err != nil {
		return notFound(err, strings.ReplaceAll(scope, "_", " "))
	}
	return nil
}

// GetBudget returns a scope's budget with its spend (NOT_FOUND when none).
func (s *Store) GetBudget(ctx context.Context, scope, scopeID string) (*kanban.Budget, error) {
	b, err := getBudget(ctx, s.stmts, scope, scopeID)
	if err != nil {
		return nil, err
	}
	if err := budgetSpend(ctx, s.stmts, b); err != nil {
		return nil, err
	}
	return b, nil
}

func getBudget(ctx context.Context, q queryer, scope, scopeID string) (*kanban.Budget, error) {
	b, err := scanBudget(q.QueryRowContext(ctx, `SELECT `+budgetColumns+` FROM budgets WHERE scope = ? AND scope_id = ?`, scope, scopeID))
	if err != nil {
		return nil, notFound(err, "budget")
	}
	return b, nil
}

func scanBudget(r rowSource) (*kanban.Budget, error) {
	var (
		b               kanban.Budget
		micros          int64
		cur, th, update string
	)
	if err := r.Scan(&b.Scope, &b.ScopeID, &b.TokenLimit, &micros, &cur, &th, &b.Revision, &update); err != nil {
		return nil, err
	}
	if micros > 0 {
		b.CostLimit = &kanban.Cost{Amount: kanban.CostAmount(micros), Currency: cur}
	}
	b.Thresholds = []int{}
	for _, f := range strings.Split(th, ",") {
		if n, err := strconv.Atoi(f); err == nil {
			b.Thresholds = append(b.Thresholds, n)
		}
	}
	b.UpdatedAt = parseTime(update)
	return &b, nil
}

var budgetListing = listing[kanban.Budget]{what: "list budgets",
	selectFrom: `SELECT ` + budgetColumns + ` FROM budgets`,
	scan:       scanBudget,
	cols:       []string{"scope", "scope_id"},
	key:        func(b kanban.Budget) []any { return []any{b.Scope, b.ScopeID} },
	bound:      func(kanban.Budget) int { return 1024 },
}

// ListBudgets returns a page of budgets with their spend, by scope and
// scope id.
func (s *Store) ListBudgets(ctx context.Context, f kanban.BudgetFilter, p kanban.Page) (*kanban.List[kanban.Budget], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	where, args := "", []any{}
	if f.Scope != "" {
		if !slices.Contains(kanban.BudgetScopes, f.Scope) {
			return nil, kanban.FieldError("scope", "must be one of workspace, agent_profile, task")
		}
		where, args = `scope = ?`, append(args, f.Scope)
	}
	l, err := budgetListing.page(ctx, s.stmts, p, where, args...)
	if err != nil {
		return nil, err
	}
	for i := range l.Items {
		if err := budgetSpend(ctx, s.stmts, &l.Items[i]); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// budgetSpend fills b.Spent from the usage of the sessions it covers (one
// indexed sum).
func budgetSpend(ctx context.Context, q queryer, b *kanban.Budget) error {
	from, where := `session_usage`, map[string]string{kanban.BudgetWorkspace: `workspace_id = ?`, kanban.BudgetTask: `task_id = ?`}[b.Scope]
	if b.Scope == kanban.BudgetAgentProfile {
		from, where = `session_usage JOIN task_sessions ON task_sessions.id = session_usage.session_id`, `task_sessions.agent_profile_id = ?`
	}
	cur := ""
	if b.CostLimit != nil {
		cur = b.CostLimit.Currency
	}
	var tokens, micros int64
	if err := q.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(input_tokens + output_tokens), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN currency = ? THEN cost_micros ELSE 0 END), 0) AS BIGINT) FROM `+from+` WHERE `+where,
		cur, b.ScopeID).Scan(&tokens, &micros); err != nil {
		return fmt.Errorf("sum budget spend: %w", err)
	}
	b.Spent = &kanban.BudgetSpend{Tokens: tokens, Cost: kanban.CostAmount(micros), Percent: b.Percent(tokens, micros)}
	return nil
}

// coveringBudgets returns the budgets covering sess (its task's, its
// agent profile's, its workspace's), by scope and scope id, with their
// spend. lock writes each budget's row first (in that order): two
// transactions recording usage under one budget then conflict on it, so
// one waits for (SQLite) or retries after (PostgreSQL, serializable) the
// other and sums the usage it committed.
func coveringBudgets(ctx context.Context, q queryer, sess *kanban.Session, lock bool) ([]*kanban.Budget, error) {
	// One primary-key lookup per scope in one query: a session no budget
	// covers costs RecordUsage this one read.
	rows, err := q.QueryContext(ctx, `SELECT `+budgetColumns+` FROM budgets WHERE (scope = ? AND scope_id = ?)
		OR (scope = ? AND scope_id = ?) OR (scope = ? AND scope_id = ?) ORDER BY scope, scope_id`,
		kanban.BudgetAgentProfile, sess.AgentProfileID, kanban.BudgetTask, sess.TaskID, kanban.BudgetWorkspace, sess.WorkspaceID)
	if err != nil {
		return nil, fmt.Errorf("read budgets: %w", err)
	}
	var out []*kanban.Budget
	for rows.Next() {
		b, err := scanBudget(rows)
		if err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("read budgets: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("read budgets: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read budgets: %w", err)
	}
	for _, b := range out {
		if lock {
			if _, err := q.ExecContext(ctx, `UPDATE budgets SET revision = revision WHERE scope = ? AND scope_id = ?`, b.Scope, b.ScopeID); err != nil {
				return nil, fmt.Errorf("lock budget: %w", err)
			}
		}
		if err := budgetSpend(ctx, q, b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fireBudgetAlerts records, in RecordUsage's transaction, the alerts of
// the budgets covering sess whose spend reached a threshold not yet
// fired in their revision, and returns them: the alert row's key makes
// each fire once, whichever transaction or backend gets there first.
func fireBudgetAlerts(ctx context.Context, tx txn, sess *kanban.Session) ([]kanban.BudgetAlert, error) {
	budgets, err := coveringBudgets(ctx, tx, sess, true)
	if err != nil {
		return nil, err
	}
	var out []kanban.BudgetAlert
	now := fmtTime(kanban.Now())
	for _, b := range budgets {
		for _, th := range b.Thresholds {
			if b.Spent.Percent < th {
				continue
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO budget_alerts (scope, scope_id, revision, threshold, session_id, percent, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, b.Scope, b.ScopeID, b.Revision, th, sess.ID, b.Spent.Percent, now)
			if err != nil {
				return nil, fmt.Errorf("record budget alert: %w", err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return nil, fmt.Errorf("record budget alert: %w", err)
			} else if n == 1 {
				out = append(out, kanban.BudgetAlert{Scope: b.Scope, ScopeID: b.ScopeID, Revision: b.Revision, Threshold: th,
					Percent: b.Spent.Percent, TaskID: sess.TaskID, SessionID: sess.ID, WorkspaceID: sess.WorkspaceID})
			}
		}
	}
	return out, nil
}

// SpentBudget returns a budget covering the session whose spend reached
// its limit (100 %), nil when none did (NOT_FOUND when the session does
// not exist).
func (s *Store) SpentBudget(ctx context.Context, sessionID string) (*kanban.Budget, error) {
	sess, err := getSession(ctx, s.stmts, sessionID)
	if err != nil {
		return nil, err
	}
	budgets, err := coveringBudgets(ctx, s.stmts, sess, false)
	if err != nil {
		return nil, err
	}
	for _, b := range budgets {
		if b.Spent.Percent >= kanban.MaxBudgetPercent {
			return b, nil
		}
	}
	return nil, nil
}

// dropBudgets deletes the budgets of scope matching where (their alerts
// cascade), in the transaction deleting what they cover: budgets have no
// foreign key to it, their scope id naming a row of one of three tables.
func dropBudgets(ctx context.Context, tx txn, scope, where string, args ...any) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM budgets WHERE scope = ? AND `+where, append([]any{scope}, args...)...); err != nil {
		return fmt.Errorf("delete budgets: %w", err)
	}
	return nil
}
