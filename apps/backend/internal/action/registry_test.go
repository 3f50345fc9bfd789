package action

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// DispatchSession authorizes with the session it is given (the caller's
// fresh read), not a second read of the store.
func TestDispatchSessionUsesTheGivenSession(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	p := h.session(h.task("T"), kanban.ModeTask)
	stored, err := h.st.GetSession(ctx, p.SessionID)
	if err != nil {
		t.Fatalf("get session: %v", err)
	}
	const configOnly = kanban.ActionAgentProfileList
	empty := json.RawMessage(`{}`)
	if _, err := h.reg.DispatchSession(ctx, p, stored, configOnly, empty); kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Fatalf("task-mode session: got %v, want FORBIDDEN", err)
	}
	asConfig := *stored
	asConfig.MCPMode = kanban.ModeConfig
	if _, err := h.reg.DispatchSession(ctx, p, &asConfig, configOnly, empty); err != nil {
		t.Fatalf("config-mode session: got %v, want success", err)
	}
	other := *stored
	other.ID = kanban.NewID()
	for name, sess := range map[string]*kanban.Session{"another session": &other, "no session": nil} {
		if _, err := h.reg.DispatchSession(ctx, p, sess, kanban.ActionTaskGet, json.RawMessage(`{"id":"self"}`)); kanban.ErrorCode(err) != kanban.CodeUnauthorized {
			t.Errorf("%s: got %v, want UNAUTHORIZED", name, err)
		}
	}
	if _, err := h.reg.DispatchSession(ctx, operator, &asConfig, configOnly, empty); kanban.ErrorCode(err) != kanban.CodeUnauthorized {
		t.Errorf("operator principal: got %v, want UNAUTHORIZED", err)
	}
}
