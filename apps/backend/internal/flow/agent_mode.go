package flow

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// execMode stores what enable_plan_mode, disable_plan_mode and
// set_session_mode set of the task's agent mode; the Service tells the
// runtime.
func (e *Engine) execMode(ctx context.Context, t *kanban.Task, a kanban.StepAction) (string, bool) {
	u, _ := a.ModeUpdate()
	before, after, err := e.svc.UpdateAgentMode(ctx, t.ID, u)
	if err != nil {
		return failure(err), true
	}
	switch {
	case a.Type == kanban.AutoSetSessionMode:
		return "the task's agents switch to ACP session mode " + after.SessionMode + " where they offer it", false
	case before.PlanMode == after.PlanMode && after.PlanMode:
		return "plan mode was already on", false
	case before.PlanMode == after.PlanMode:
		return "plan mode was already off", false
	case after.PlanMode:
		return "plan mode on: the task's agents get the plan-mode instructions with every prompt", false
	}
	return "plan mode off", false
}

// execReset asks the runtime to run the next turn of the task's live
// session in a fresh ACP session.
func (e *Engine) execReset(ctx context.Context, t *kanban.Task) (string, bool) {
	sess, err := e.svc.LiveSession(ctx, t.ID)
	if kanban.ErrorCode(err) == kanban.CodeConflict {
		return "skipped: the task has no live agent session (a new one starts with a fresh context)", false
	}
	if err != nil {
		return failure(err), true
	}
	if !sess.Managed {
		return "skipped: session " + sess.ID + " runs an agent connected by hand, which Kandev cannot reset", false
	}
	if _, _, err := e.svc.UpdateAgentMode(ctx, t.ID, kanban.AgentModeUpdate{ResetSessionID: &sess.ID}); err != nil {
		return failure(err), true
	}
	return "the next turn of session " + sess.ID + " starts in a fresh agent session, without the previous context", false
}
