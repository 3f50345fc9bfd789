package kanban

import (
	"math"
	"slices"
	"testing"
)

// TestUsageClamp: each out-of-bounds value is brought to its bound and
// named; a report within bounds is unchanged.
func TestUsageClamp(t *testing.T) {
	tests := []struct {
		name  string
		in    UsageReport
		want  UsageReport
		fixed []string
	}{
		{"within bounds", UsageReport{Tokens: Tokens{Input: 5}, Cost: &Cost{Amount: 1, Currency: "USD"}, ContextUsed: 3, ContextSize: 9},
			UsageReport{Tokens: Tokens{Input: 5}, Cost: &Cost{Amount: 1, Currency: "USD"}, ContextUsed: 3, ContextSize: 9}, nil},
		{"negative counts", UsageReport{Tokens: Tokens{Input: -1, Thought: -2}, ContextUsed: -3},
			UsageReport{}, []string{"input_tokens", "thought_tokens", "context_used"}},
		{"huge counts", UsageReport{Tokens: Tokens{Output: MaxTurnTokens + 1, CachedRead: math.MaxInt64}, ContextSize: MaxContextTokens + 1},
			UsageReport{Tokens: Tokens{Output: MaxTurnTokens, CachedRead: MaxTurnTokens}, ContextSize: MaxContextTokens},
			[]string{"output_tokens", "cached_read_tokens", "context_size"}},
		{"NaN cost", UsageReport{Cost: &Cost{Amount: math.NaN(), Currency: "USD"}}, UsageReport{}, []string{"cost"}},
		{"infinite cost", UsageReport{Cost: &Cost{Amount: math.Inf(1)}}, UsageReport{}, []string{"cost"}},
		{"negative cost", UsageReport{Cost: &Cost{Amount: -0.5}}, UsageReport{}, []string{"cost"}},
		{"huge cost, bad currency", UsageReport{Cost: &Cost{Amount: 1e20, Currency: "dollars"}},
			UsageReport{Cost: &Cost{Amount: MaxReportedCost}}, []string{"cost", "currency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fixed := tt.in.Clamp()
			if got.Tokens != tt.want.Tokens || got.ContextUsed != tt.want.ContextUsed || got.ContextSize != tt.want.ContextSize ||
				(got.Cost == nil) != (tt.want.Cost == nil) || (got.Cost != nil && *got.Cost != *tt.want.Cost) || !slices.Equal(fixed, tt.fixed) {
				t.Fatalf("got %+v (cost %+v) fixing %v, want %+v (cost %+v) fixing %v", got, got.Cost, fixed, tt.want, tt.want.Cost, tt.fixed)
			}
		})
	}
}
