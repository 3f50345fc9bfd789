package mockagent

import (
	"encoding/json"

	acp "github.com/coder/acp-go-sdk"
)

// addUsage adds @usage's token counts to the turn's usage, as real agents
// report it in their prompt response (values are passed on as given, so
// tests can send what a faulty agent would).
func (t *turn) addUsage(arg string) {
	var u acp.Usage
	if err := json.Unmarshal([]byte(arg), &u); err != nil {
		t.say("mock agent: @usage needs a JSON object of ACP usage (inputTokens, outputTokens, ...)")
		return
	}
	if t.usage == nil {
		t.usage = &acp.Usage{}
	}
	add := func(dst **int, v *int) {
		if v == nil {
			return
		}
		if *dst == nil {
			*dst = new(int)
		}
		**dst += *v
	}
	t.usage.InputTokens += u.InputTokens
	t.usage.OutputTokens += u.OutputTokens
	add(&t.usage.CachedReadTokens, u.CachedReadTokens)
	add(&t.usage.CachedWriteTokens, u.CachedWriteTokens)
	add(&t.usage.ThoughtTokens, u.ThoughtTokens)
	total := u.TotalTokens
	if total == 0 {
		total = u.InputTokens + u.OutputTokens
	}
	t.usage.TotalTokens += total
}

// cost sends @cost's usage_update, as real agents report their session's
// cumulative cost and context window.
func (t *turn) cost(arg string) {
	var u acp.SessionUsageUpdate
	if err := json.Unmarshal([]byte(arg), &u); err != nil {
		t.say("mock agent: @cost needs a JSON object of an ACP usage_update (used, size, cost)")
		return
	}
	u.SessionUpdate = "usage_update"
	t.update(acp.SessionUpdate{UsageUpdate: &u})
}
