package kanban

import (
	"context"
	"math"
	"time"
)

// Usage bounds: what one report of an agent may add. A value past its
// bound is clamped to it (and logged by the recorder); a negative one is
// refused (counted as zero).
const (
	// MaxTurnTokens bounds each token count of one turn.
	MaxTurnTokens = 1_000_000_000
	// MaxTurnCostMicros bounds one turn's cost: 100,000 currency units.
	MaxTurnCostMicros = 100_000 * CostMicrosPerUnit
	// MaxReportedCost bounds the cumulative cost an agent reports, in
	// currency units.
	MaxReportedCost = 1_000_000_000
	// MaxContextTokens bounds a reported context window.
	MaxContextTokens = 100_000_000
	// MaxUsageTurnRows is how many turn rows a session keeps: older turns
	// are folded into the session's totals (which always count every
	// turn) and their rows deleted.
	MaxUsageTurnRows = 200
	// CostMicrosPerUnit: costs are stored as integer millionths of their
	// currency unit, so sums are exact on every engine.
	CostMicrosPerUnit = 1_000_000
)

// Tokens are the token counts an agent reports for a turn (ACP's
// PromptResponse.usage).
type Tokens struct {
	Input       int64 `json:"input_tokens"`
	Output      int64 `json:"output_tokens"`
	CachedRead  int64 `json:"cached_read_tokens"`
	CachedWrite int64 `json:"cached_write_tokens"`
	Thought     int64 `json:"thought_tokens"`
}

// Add returns the sum of t and o.
func (t Tokens) Add(o Tokens) Tokens {
	return Tokens{Input: t.Input + o.Input, Output: t.Output + o.Output, CachedRead: t.CachedRead + o.CachedRead,
		CachedWrite: t.CachedWrite + o.CachedWrite, Thought: t.Thought + o.Thought}
}

// UsageReport is what the runtime records at the end of a turn: the
// turn's tokens and the agent's cumulative cost and context window as
// last reported in its ACP session (usage_update), if it reported them.
type UsageReport struct {
	SessionID string
	// AgentSessionID is the ACP session the cost is cumulative in: a new
	// one restarts the count.
	AgentSessionID string
	Tokens         Tokens
	// Cost is the ACP session's cumulative cost, nil when the agent
	// reported none.
	Cost        *Cost
	ContextUsed int64
	ContextSize int64
}

// Clamp bounds r's values: negative counts become zero, values past
// their bound the bound, a negative or non-finite cost none, a currency
// that is not three letters A–Z empty. It returns the names of the
// fields it changed.
func (r UsageReport) Clamp() (UsageReport, []string) {
	var fixed []string
	bound := func(name string, v *int64, hi int64) {
		switch {
		case *v < 0:
			*v, fixed = 0, append(fixed, name)
		case *v > hi:
			*v, fixed = hi, append(fixed, name)
		}
	}
	bound("input_tokens", &r.Tokens.Input, MaxTurnTokens)
	bound("output_tokens", &r.Tokens.Output, MaxTurnTokens)
	bound("cached_read_tokens", &r.Tokens.CachedRead, MaxTurnTokens)
	bound("cached_write_tokens", &r.Tokens.CachedWrite, MaxTurnTokens)
	bound("thought_tokens", &r.Tokens.Thought, MaxTurnTokens)
	bound("context_used", &r.ContextUsed, MaxContextTokens)
	bound("context_size", &r.ContextSize, MaxContextTokens)
	if r.Cost != nil {
		c := *r.Cost
		switch {
		case math.IsNaN(c.Amount) || math.IsInf(c.Amount, 0) || c.Amount < 0:
			r.Cost, fixed = nil, append(fixed, "cost")
		case c.Amount > MaxReportedCost:
			c.Amount, fixed = MaxReportedCost, append(fixed, "cost")
		}
		if r.Cost != nil {
			if !validCurrency(c.Currency) {
				if c.Currency != "" {
					fixed = append(fixed, "currency")
				}
				c.Currency = ""
			}
			r.Cost = &c
		}
	}
	return r, fixed
}

func validCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := range 3 {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}

// CostMicros is amount (finite, 0 ≤ amount ≤ MaxReportedCost) in
// millionths of its unit.
func CostMicros(amount float64) int64 { return int64(math.Round(amount * CostMicrosPerUnit)) }

// CostAmount is micros in units.
func CostAmount(micros int64) float64 { return float64(micros) / CostMicrosPerUnit }

// Cost is an amount in one currency ("" when the agent named none).
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// TurnUsage is one recorded turn of a session: Seq numbers the session's
// turns with usage from 1.
type TurnUsage struct {
	SessionID string `json:"session_id"`
	Seq       int    `json:"seq"`
	Tokens
	Cost      Cost      `json:"cost"`
	CreatedAt time.Time `json:"created_at"`
}

// SessionUsage is a session's usage totals: every turn it recorded, the
// ones whose rows were folded in included.
type SessionUsage struct {
	SessionID   string `json:"session_id"`
	TaskID      string `json:"task_id"`
	WorkspaceID string `json:"workspace_id"`
	Turns       int    `json:"turns"`
	Tokens
	Cost        Cost      `json:"cost"`
	ContextUsed int64     `json:"context_used"`
	ContextSize int64     `json:"context_size"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Alerts are the budget alerts the report that returned these totals
	// fired (RecordUsage only), each once.
	Alerts []BudgetAlert `json:"budget_alerts,omitempty"`
}

// UsageTotals sums the usage of a task's or a workspace's sessions; Costs
// has one entry per currency.
type UsageTotals struct {
	Sessions int `json:"sessions"`
	Turns    int `json:"turns"`
	Tokens
	Costs []Cost `json:"costs"`
}

// UsageService stores what agents report they consumed.
type UsageService interface {
	// RecordUsage adds one turn's report (clamped by the caller) to its
	// session's totals and turn rows, in one transaction, and returns the
	// totals (NOT_FOUND when the session does not exist).
	RecordUsage(ctx context.Context, r UsageReport) (*SessionUsage, error)
	// SessionUsage returns a session's totals (zero when none recorded)
	// and a page of its turn rows, newest first (NOT_FOUND when the
	// session does not exist).
	SessionUsage(ctx context.Context, sessionID string, p Page) (*SessionUsage, *List[TurnUsage], error)
	// UsageOf returns the totals of the sessions of ids (at most MaxLimit)
	// that recorded usage, by session id.
	UsageOf(ctx context.Context, ids []string) (map[string]*SessionUsage, error)
	// TaskUsage sums the usage of a task's sessions (NOT_FOUND when the
	// task does not exist).
	TaskUsage(ctx context.Context, taskID string) (*UsageTotals, error)
	// WorkspaceUsage sums the usage of a workspace's sessions (NOT_FOUND
	// when the workspace does not exist).
	WorkspaceUsage(ctx context.Context, workspaceID string) (*UsageTotals, error)
}
