package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// BudgetSetIn is the payload of budget.set.
type BudgetSetIn struct {
	Scope      string       `json:"scope,omitzero"`
	ScopeID    string       `json:"scope_id,omitzero"`
	TokenLimit int64        `json:"token_limit,omitzero"`
	CostLimit  *kanban.Cost `json:"cost_limit,omitzero"`
	Thresholds []int        `json:"thresholds,omitzero"`
}

// BudgetRefIn is the payload of budget.get.
type BudgetRefIn struct {
	Scope   string `json:"scope,omitzero"`
	ScopeID string `json:"scope_id,omitzero"`
}

// BudgetListIn is the payload of budget.list.
type BudgetListIn struct {
	Scope  string `json:"scope,omitzero"`
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

func budgetScopeProp() schema.S {
	return schema.Enum("What the budget covers: every session of a workspace, of an agent profile, or of a task.",
		kanban.BudgetScopes...)
}

func budgetRefProps() schema.P {
	return schema.P{
		"scope":    budgetScopeProp(),
		"scope_id": idProp("The workspace, agent profile or task."),
	}
}

var _ = declare(Def[BudgetSetIn, *kanban.Budget]{
	Name:   kanban.ActionBudgetSet,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", func() schema.P {
		p := budgetRefProps()
		p["token_limit"] = schema.Int("The most tokens (input plus output) its sessions may spend; 0 or omitted: no token limit.").
			Range(0, kanban.MaxBudgetTokens)
		p["cost_limit"] = schema.Obj("The most its sessions may cost, in one currency (costs in others are not counted); omitted: no cost limit.",
			schema.P{
				"amount":   schema.S{"type": "number", "description": "In currency units, more than 0."}.Above(0, kanban.MaxBudgetCost),
				"currency": schema.Str("Three letters A-Z, e.g. USD.").Pattern("^[A-Z]{3}$"),
			}, "amount", "currency")
		p["thresholds"] = schema.Arr("Alert thresholds, in percent of the limit: on_budget_alert fires once for each as spend reaches it; default [80].",
			schema.Int("A percent.").Range(1, kanban.MaxBudgetPercent)).Items(0, kanban.MaxBudgetThresholds)
		return p
	}(), "scope", "scope_id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in BudgetSetIn) (*kanban.Budget, error) {
		return s.store.SetBudget(ctx, kanban.BudgetSet{Scope: in.Scope, ScopeID: in.ScopeID, TokenLimit: in.TokenLimit,
			CostLimit: in.CostLimit, Thresholds: in.Thresholds})
	},
})

var _ = declare(Def[BudgetRefIn, *kanban.Budget]{
	Name:   kanban.ActionBudgetGet,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", budgetRefProps(), "scope", "scope_id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in BudgetRefIn) (*kanban.Budget, error) {
		return s.store.GetBudget(ctx, in.Scope, in.ScopeID)
	},
})

var _ = declare(Def[BudgetListIn, *kanban.List[kanban.Budget]]{
	Name:   kanban.ActionBudgetList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{"scope": budgetScopeProp()})),
	Run: func(s *Service, ctx context.Context, _ Principal, in BudgetListIn) (*kanban.List[kanban.Budget], error) {
		return s.store.ListBudgets(ctx, kanban.BudgetFilter{Scope: in.Scope}, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

// budgetAllows is BUDGET_EXCEEDED when a budget covering the session is
// spent: no prompt is queued for a turn that would be refused, and the
// refusal is shown in the session's conversation too.
func (s *Service) budgetAllows(ctx context.Context, sess *kanban.Session) error {
	b, err := s.store.SpentBudget(ctx, sess.ID)
	if err != nil || b == nil {
		return err
	}
	refused := kanban.BudgetExceededError(b)
	if m, err := s.store.AppendMessage(ctx, kanban.Message{SessionID: sess.ID, Author: "kandev", Type: "error",
		Content: "Prompt refused: " + refused.Error()}); err == nil {
		s.publishMessage(m, sess.WorkspaceID, "")
	}
	return refused
}
