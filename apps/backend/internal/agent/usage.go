package agent

import (
	"math"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// usageSeen is what the agent last reported in usage_update notifications
// during a turn: its ACP session's cumulative cost and context window.
// The ACP callbacks write it; the run's goroutine takes it at the turn's
// end.
type usageSeen struct {
	mu       sync.Mutex
	reported bool
	cost     *kanban.Cost
	used     int64
	size     int64
}

// saw keeps a usage_update (the newest wins: its values are cumulative).
func (u *usageSeen) saw(up *acp.SessionUsageUpdate) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.reported, u.used, u.size = true, int64(up.Used), int64(up.Size)
	if up.Cost != nil {
		u.cost = &kanban.Cost{Amount: up.Cost.Amount, Currency: up.Cost.Currency}
	}
}

// take returns what was seen since the last take and forgets it.
func (u *usageSeen) take() (reported bool, cost *kanban.Cost, used, size int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	reported, cost, used, size = u.reported, u.cost, u.used, u.size
	u.reported, u.cost, u.used, u.size = false, nil, 0, 0
	return reported, cost, used, size
}

// recordUsage records the turn's usage — the prompt response's token
// counts and the last usage_update of the turn — when the agent reported
// any, and publishes the session's totals and the budget alerts the
// turn fired (in the conversation, on the bus, and to the workflow
// engine's on_budget_alert). Values out of bounds are
// clamped and logged; a failed write is logged (the turn's outcome does
// not depend on it).
func (r *run) recordUsage(l *launch, resp acp.PromptResponse) {
	reported, cost, used, size := r.usage.take()
	tokens := promptUsage(resp)
	if !reported && tokens == nil {
		return
	}
	r.turn.mu.Lock()
	sid := string(r.turn.agentSID)
	r.turn.mu.Unlock()
	rep := kanban.UsageReport{SessionID: r.id, AgentSessionID: sid, Cost: cost, ContextUsed: used, ContextSize: size}
	if u := tokens; u != nil {
		rep.Tokens = kanban.Tokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens),
			CachedRead: deref(u.CachedReadTokens), CachedWrite: deref(u.CachedWriteTokens), Thought: deref(u.ThoughtTokens)}
	}
	rep, fixed := rep.Clamp()
	if len(fixed) > 0 {
		r.m.log.Warn("agent reported usage out of bounds; clamped", "session", r.id, "agent", l.agent, "fields", fixed)
	}
	total, err := r.m.store.RecordUsage(r.keep(), rep)
	if err != nil {
		r.m.log.Error("record usage", "session", r.id, "err", err)
		return
	}
	kanban.EventSessionUsageUpdated.Publish(r.m.pub, action.SessionTopic(r.id), total)
	kanban.EventSessionUsageUpdated.Publish(r.m.pub, action.WorkspaceTopic(total.WorkspaceID), total)
	for _, a := range total.Alerts {
		r.rec.note("status", kanban.BudgetAlertText(a))
		kanban.EventBudgetAlerted.Publish(r.m.pub, action.WorkspaceTopic(a.WorkspaceID), a)
		r.m.cfg.Events.Emit(a)
	}
}

// promptUsage is the turn's token counts from its prompt response: ACP's
// usage, else the counts Gemini CLI sends in _meta.quota.token_count
// (input_tokens, output_tokens; 0.61's acpSession.ts answers
// session/prompt with no ACP usage and sends no usage_update), nil when
// the response has neither.
func promptUsage(resp acp.PromptResponse) *acp.Usage {
	if resp.Usage != nil {
		return resp.Usage
	}
	quota, _ := resp.Meta["quota"].(map[string]any)
	counts, _ := quota["token_count"].(map[string]any)
	in, okIn := metaCount(counts["input_tokens"])
	out, okOut := metaCount(counts["output_tokens"])
	if !okIn || !okOut {
		return nil
	}
	return &acp.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}

// metaCount is a JSON number as a token count, bounded just past
// kanban.MaxTurnTokens either side so that Clamp still sees (and logs) a
// value out of bounds; false when v is not a number.
func metaCount(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return int(max(min(f, kanban.MaxTurnTokens+1), -1)), true
}

func deref(p *int) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}
