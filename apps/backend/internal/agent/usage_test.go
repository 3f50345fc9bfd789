package agent

import (
	"encoding/json"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestPromptUsage decodes prompt responses as agents send them: ACP's
// usage wins; Gemini CLI's _meta.quota.token_count is read when there is
// no usage; anything else records no tokens.
func TestPromptUsage(t *testing.T) {
	cases := []struct {
		name    string
		raw     string
		want    *acp.Usage
		wantNil bool
	}{
		{name: "acp usage", raw: `{"stopReason":"end_turn","usage":{"inputTokens":20,"outputTokens":10,"totalTokens":30},"_meta":{"quota":{"token_count":{"input_tokens":1,"output_tokens":2}}}}`,
			want: &acp.Usage{InputTokens: 20, OutputTokens: 10, TotalTokens: 30}},
		{name: "gemini quota", raw: `{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":20,"output_tokens":10},"model_usage":[{"model":"m","token_count":{"input_tokens":20,"output_tokens":10}}]}}}`,
			want: &acp.Usage{InputTokens: 20, OutputTokens: 10, TotalTokens: 30}},
		{name: "gemini zero", raw: `{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":0,"output_tokens":0},"model_usage":[]}}}`,
			want: &acp.Usage{}},
		{name: "past the bound", raw: `{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":1e300,"output_tokens":-1e300}}}}`,
			want: &acp.Usage{InputTokens: kanban.MaxTurnTokens + 1, OutputTokens: -1, TotalTokens: kanban.MaxTurnTokens}},
		{name: "none", raw: `{"stopReason":"cancelled"}`, wantNil: true},
		{name: "other meta", raw: `{"stopReason":"end_turn","_meta":{"quota":"x"}}`, wantNil: true},
		{name: "one count missing", raw: `{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":3}}}}`, wantNil: true},
		{name: "not numbers", raw: `{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":"3","output_tokens":4}}}}`, wantNil: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var resp acp.PromptResponse
			if err := json.Unmarshal([]byte(c.raw), &resp); err != nil {
				t.Fatal(err)
			}
			got := promptUsage(resp)
			if c.wantNil {
				if got != nil {
					t.Fatalf("got %+v, want none", *got)
				}
				return
			}
			if got == nil || *got != *c.want {
				t.Fatalf("got %+v, want %+v", got, *c.want)
			}
		})
	}
	// Out of bounds values still reach Clamp, which bounds and names them.
	u := promptUsage(acp.PromptResponse{Meta: map[string]any{"quota": map[string]any{"token_count": map[string]any{"input_tokens": 1e300, "output_tokens": -5.0}}}})
	rep, fixed := kanban.UsageReport{Tokens: kanban.Tokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens)}}.Clamp()
	if rep.Tokens.Input != kanban.MaxTurnTokens || rep.Tokens.Output != 0 || len(fixed) != 2 {
		t.Fatalf("clamped %+v, fixed %v", rep.Tokens, fixed)
	}
}
