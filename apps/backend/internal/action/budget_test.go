package action

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBudgetSetRefuses: budget.set refuses out-of-range limits before it
// writes anything, with the bound its schema advertises.
func TestBudgetSetRefuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ref := `"scope":"workspace","scope_id":"` + h.ws + `"`
	for _, tc := range []struct{ args, want string }{
		{`{` + ref + `,"cost_limit":{"amount":0,"currency":"USD"}}`, "/cost_limit/amount: must be > 0 (exclusiveMinimum)"},
		{`{` + ref + `,"cost_limit":{"amount":-1,"currency":"USD"}}`, "/cost_limit/amount: must be > 0 (exclusiveMinimum)"},
		{`{` + ref + `,"cost_limit":{"amount":1,"currency":"usd"}}`, "/cost_limit/currency"},
		{`{` + ref + `,"token_limit":-1}`, "/token_limit: must be >= 0 (minimum)"},
		{`{` + ref + `,"thresholds":[0]}`, "/thresholds/0: must be >= 1 (minimum)"},
		{`{"scope":"galaxy","scope_id":"` + h.ws + `"}`, "/scope"},
	} {
		if msg := h.refuse(operator, kanban.ActionBudgetSet, tc.args, kanban.CodeValidation); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: got %q, want it to say %q", tc.args, msg, tc.want)
		}
	}
	if n := h.count("budgets"); n != 0 {
		t.Fatalf("%d budgets written by refused calls", n)
	}
	b := call[kanban.Budget](h, operator, kanban.ActionBudgetSet, `{`+ref+`,"cost_limit":{"amount":0.01,"currency":"USD"}}`)
	if b.CostLimit == nil || b.CostLimit.Amount != 0.01 {
		t.Fatalf("budget %+v", b)
	}
}
