package kanban

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Budget scopes: what a budget covers.
const (
	BudgetWorkspace    = "workspace"     // every session of the workspace
	BudgetAgentProfile = "agent_profile" // every session run with the agent profile
	BudgetTask         = "task"          // every session of the task
)

// BudgetScopes is the closed set of budget scopes.
var BudgetScopes = []string{BudgetWorkspace, BudgetAgentProfile, BudgetTask}

// Budget bounds.
const (
	// MaxBudgetTokens bounds a token limit.
	MaxBudgetTokens = 1_000_000_000_000
	// MaxBudgetCost bounds a cost limit, in currency units.
	MaxBudgetCost = 1_000_000_000
	// MaxBudgetThresholds bounds the alert thresholds of one budget.
	MaxBudgetThresholds = 5
	// MaxBudgetPercent is the highest alert threshold: the limit itself.
	MaxBudgetPercent = 100
	// DefaultBudgetThreshold is the alert threshold of a budget set
	// without any.
	DefaultBudgetThreshold = 80
)

// Budget is a limit on what the sessions of a scope may spend: tokens
// (input plus output, summed over the sessions it covers) and/or cost
// (in one currency). Revision counts the changes of its limits and
// thresholds: each alert fires once per revision.
type Budget struct {
	Scope   string `json:"scope"`
	ScopeID string `json:"scope_id"`
	// TokenLimit is 0 when the budget limits no tokens.
	TokenLimit int64 `json:"token_limit"`
	// CostLimit is nil when the budget limits no cost.
	CostLimit  *Cost     `json:"cost_limit,omitempty"`
	Thresholds []int     `json:"thresholds"`
	Revision   int       `json:"revision"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Spent is what the sessions it covers spent so far (filled by reads).
	Spent *BudgetSpend `json:"spent,omitempty"`
}

// BudgetSpend is what a budget's sessions spent: tokens (input plus
// output), cost in the budget's currency, and the larger of the two as a
// whole percent of its limit.
type BudgetSpend struct {
	Tokens  int64   `json:"tokens"`
	Cost    float64 `json:"cost"`
	Percent int     `json:"percent"`
}

// BudgetSet is the change budget.set makes: the limits and thresholds of
// one scope's budget (created, or replaced).
type BudgetSet struct {
	Scope      string
	ScopeID    string
	TokenLimit int64
	CostLimit  *Cost
	Thresholds []int
}

// Validate checks s's bounds and fills the default threshold.
func (s *BudgetSet) Validate() error {
	if !slices.Contains(BudgetScopes, s.Scope) {
		return FieldError("scope", "must be one of workspace, agent_profile, task")
	}
	if s.ScopeID == "" {
		return FieldError("scope_id", "is required")
	}
	if s.TokenLimit < 0 || s.TokenLimit > MaxBudgetTokens {
		return FieldError("token_limit", "must be 0 to %d", int64(MaxBudgetTokens))
	}
	if c := s.CostLimit; c != nil {
		if !(c.Amount > 0 && c.Amount <= MaxBudgetCost) {
			return FieldError("cost_limit", "amount must be more than 0 and at most %d", MaxBudgetCost)
		}
		if !validCurrency(c.Currency) {
			return FieldError("cost_limit", "currency must be three letters A-Z")
		}
	}
	if s.TokenLimit == 0 && s.CostLimit == nil {
		return FieldError("token_limit", "a budget needs a token limit or a cost limit")
	}
	if len(s.Thresholds) == 0 {
		s.Thresholds = []int{DefaultBudgetThreshold}
	}
	if len(s.Thresholds) > MaxBudgetThresholds {
		return FieldError("thresholds", "at most %d", MaxBudgetThresholds)
	}
	for _, t := range s.Thresholds {
		if t < 1 || t > MaxBudgetPercent {
			return FieldError("thresholds", "each must be 1 to %d", MaxBudgetPercent)
		}
	}
	s.Thresholds = slices.Compact(slices.Sorted(slices.Values(s.Thresholds)))
	return nil
}

// Percent is spend as a whole percent of b's limits (the larger of its
// token and cost percents, rounded down, at most 1000).
func (b *Budget) Percent(tokens, costMicros int64) int {
	pct := int64(0)
	if b.TokenLimit > 0 {
		pct = max(pct, tokens*100/b.TokenLimit)
	}
	if b.CostLimit != nil {
		if lim := CostMicros(b.CostLimit.Amount); lim > 0 {
			pct = max(pct, costMicros*100/lim)
		}
	}
	return int(min(pct, 1000))
}

// BudgetAlert says a turn's usage pushed a budget's spend across one of
// its alert thresholds: fired once per (budget, revision, threshold).
type BudgetAlert struct {
	Scope     string `json:"scope"`
	ScopeID   string `json:"scope_id"`
	Revision  int    `json:"revision"`
	Threshold int    `json:"threshold"`
	// Percent is the budget's spend when it fired, in whole percent.
	Percent     int    `json:"percent"`
	TaskID      string `json:"task_id"`
	SessionID   string `json:"session_id"`
	WorkspaceID string `json:"workspace_id"`
}

func (BudgetAlert) domainEvent() {}

// BudgetAlertText says what a fired alert is, for the conversation and
// the agents an on_budget_alert wakes.
func BudgetAlertText(a BudgetAlert) string {
	return fmt.Sprintf("Budget alert: the %s budget covering this task reached its %d%% threshold (%d%% of its limit spent).",
		a.Scope, a.Threshold, a.Percent)
}

// BudgetExceededError is the refusal of a new turn of a session a spent
// budget covers: it names the budget's scope and its spend against its
// limit (no caller value).
func BudgetExceededError(b *Budget) *Error {
	msg := fmt.Sprintf("the %s budget covering this session is spent (%d%% of its limit", b.Scope, b.Spent.Percent)
	if b.TokenLimit > 0 {
		msg += fmt.Sprintf("; tokens %d of %d", b.Spent.Tokens, b.TokenLimit)
	}
	if b.CostLimit != nil {
		msg += fmt.Sprintf("; cost %.6f of %.6f %s", b.Spent.Cost, b.CostLimit.Amount, b.CostLimit.Currency)
	}
	return Errorf(CodeBudgetExceeded, "%s); no new turn starts until the operator raises it (budget.set)", msg)
}

// BudgetFilter selects budgets to list: all, or one scope's.
type BudgetFilter struct {
	Scope string
}

// BudgetService stores budgets and checks the sessions they cover.
type BudgetService interface {
	// SetBudget creates or replaces a scope's budget (a new revision).
	SetBudget(ctx context.Context, s BudgetSet) (*Budget, error)
	// GetBudget returns a scope's budget with its spend (NOT_FOUND when
	// none).
	GetBudget(ctx context.Context, scope, scopeID string) (*Budget, error)
	// ListBudgets returns a page of budgets with their spend, by scope and
	// scope id.
	ListBudgets(ctx context.Context, f BudgetFilter, p Page) (*List[Budget], error)
	// SpentBudget returns a budget covering the session whose spend is at
	// least its limit, nil when none is.
	SpentBudget(ctx context.Context, sessionID string) (*Budget, error)
}
