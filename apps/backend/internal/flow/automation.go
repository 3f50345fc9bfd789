package flow

import (
	"context"
	"fmt"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// run runs the automations of event on step (the task's current step when
// stepID is empty), in order, recording each in the task's conversation.
// signalled is set for on_turn_complete: whether the agent called
// step_complete_kandev in the turn (moves wait for it when the step says so).
func (e *Engine) run(taskID, stepID, event string, c cause, signalled *bool) {
	e.runWhere(taskID, stepID, event, c, signalled, nil)
}

// runWhere is run for the automations keep selects (all when nil).
func (e *Engine) runWhere(taskID, stepID, event string, c cause, signalled *bool, keep func(kanban.StepAction) bool) {
	ctx := e.ctx
	if stepID != "" {
		// A step without automations for event needs no further read.
		if step, err := e.store.GetStep(ctx, stepID); err == nil && !slices.ContainsFunc(step.Events[event], keepAll(keep)) {
			return
		}
	}
	t, err := e.store.GetTask(ctx, taskID)
	if err != nil || t.ArchivedAt != nil {
		return // deleted or archived meanwhile: nothing more runs for it
	}
	if stepID == "" {
		stepID = t.WorkflowStepID
	}
	step, err := e.store.GetStep(ctx, stepID)
	if err != nil {
		return
	}
	if c.woken == nil {
		c.woken = wakeSet{}
	}
	switch {
	case event == kanban.EventEnter:
		c.at = t.StepEnteredAt // the entry that fired it
	case c.at.IsZero():
		c.at = kanban.Now()
	}
	for _, a := range step.Events[event] {
		if keep != nil && !keep(a) {
			continue
		}
		if t, err = e.store.GetTask(ctx, taskID); err != nil || t.ArchivedAt != nil {
			return
		}
		outcome, failed := e.exec(ctx, t, step, a, c, signalled)
		typ := "status"
		if failed {
			typ = "error"
		}
		e.svc.Record(ctx, t.ID, typ, fmt.Sprintf("%s of %s, %s: %s", event, step.Name, a.Type, outcome))
	}
}

// keepAll is keep, or a selector of every automation when keep is nil.
func keepAll(keep func(kanban.StepAction) bool) func(kanban.StepAction) bool {
	if keep == nil {
		return func(kanban.StepAction) bool { return true }
	}
	return keep
}

// exec performs one automation and says what happened; failed marks an
// error (recorded; the next automation runs anyway).
func (e *Engine) exec(ctx context.Context, t *kanban.Task, step *kanban.WorkflowStep, a kanban.StepAction, c cause, signalled *bool) (string, bool) {
	switch a.Type {
	case kanban.AutoStartAgent, kanban.AutoAutoStartAgent:
		return e.startAgent(ctx, t, a, c)
	case kanban.AutoSendPrompt:
		if _, err := e.svc.SendPrompt(ctx, t.ID, "workflow", a.ConfigString("prompt")); err != nil {
			if kanban.ErrorCode(err) == kanban.CodeConflict {
				return "skipped: the task has no live agent session", false
			}
			return failure(err), true
		}
		return "queued as the agent's next turn", false
	case kanban.AutoSetState:
		st := kanban.TaskState(a.ConfigString("state"))
		if _, err := e.svc.SetTaskState(ctx, t.ID, st); err != nil {
			return failure(err), true
		}
		return "state set to " + string(st), false
	case kanban.AutoStopAgent:
		note := "Stopped by the workflow"
		if r := a.ConfigString("reason"); r != "" {
			note += ": " + r
		}
		ids, err := e.svc.StopAgents(ctx, t.ID, "workflow", note)
		if err != nil {
			return failure(err), true
		}
		if c.turn != nil {
			c.turn.replaced = true // the workflow stopped the agent: a start later in the chain replaces it
		}
		return fmt.Sprintf("stopped %d session(s)", len(ids)), false
	case kanban.AutoArchive:
		if _, err := e.svc.ArchiveTask(ctx, t.ID, "Stopped: the workflow archived the task"); err != nil {
			return failure(err), true
		}
		return "archived", false
	case kanban.AutoEnablePlanMode, kanban.AutoDisablePlanMode, kanban.AutoSetSessionMode:
		return e.execMode(ctx, t, a)
	case kanban.AutoResetContext:
		return e.execReset(ctx, t)
	}
	if out, failed, ok := e.execOffice(ctx, t, step, a, c); ok {
		return out, failed
	}
	return e.execMove(ctx, t, step, a, c, signalled)
}

// startAgent performs start_agent and auto_start_agent.
func (e *Engine) startAgent(ctx context.Context, t *kanban.Task, a kanban.StepAction, c cause) (string, bool) {
	if why := e.agentStopped(ctx, c); why != "" {
		return why, false
	}
	origin := "" // the start is void if this turn's agent is stopped meanwhile
	if c.turn != nil && !c.turn.replaced {
		origin = c.turn.session
	}
	sess, started, err := e.svc.StartAgent(ctx, t.ID, a.ConfigString("agent_profile_id"), a.ConfigString("executor_profile_id"), a.ConfigString("prompt"), origin)
	switch {
	case err != nil && origin != "" && kanban.ErrorCode(err) == kanban.CodeConflict:
		if why := e.agentStopped(ctx, c); why != "" {
			return why, false
		}
		return failure(err), true
	case err != nil:
		return failure(err), true
	case !started:
		return "skipped: the task already has a live agent session (" + sess.ID + ")", false
	}
	return "started session " + sess.ID, false
}

// agentStopped says why a start_agent of a chain that an agent's turn
// caused is skipped: that agent is the task's agent, and if it has ended
// meanwhile (someone stopped it, it crashed) no other one starts in its
// place behind the operator's back — unless a stop_agent of the same
// chain stopped it, to replace it. "" lets the start go on (it is still
// skipped while a session is live).
func (e *Engine) agentStopped(ctx context.Context, c cause) string {
	if c.turn == nil || c.turn.replaced {
		return ""
	}
	s, err := e.store.GetSession(ctx, c.turn.session)
	if err != nil || !s.State.Ended() {
		return ""
	}
	return "skipped: the agent whose turn led here (session " + s.ID + ") has " + endedWord(s.State) +
		"; start one from the task page or move the task again"
}

// endedWord words how a session ended.
func endedWord(st kanban.SessionState) string {
	switch st {
	case kanban.SessionCancelled:
		return "been stopped"
	case kanban.SessionFailed:
		return "failed"
	}
	return "exited"
}

// execMove performs the move automations.
func (e *Engine) execMove(ctx context.Context, t *kanban.Task, step *kanban.WorkflowStep, a kanban.StepAction, c cause, signalled *bool) (string, bool) {
	if signalled != nil && step.AutoAdvanceRequiresSignal && !*signalled {
		return "skipped: waiting for the agent's step_complete_kandev (auto_advance_requires_signal)", false
	}
	if t.WorkflowStepID != step.ID {
		return "skipped: the task is no longer on this step", false
	}
	var (
		target *kanban.WorkflowStep
		err    error
	)
	switch a.Type {
	case kanban.AutoMoveNext, kanban.AutoMoveNextStep:
		target, err = e.svc.Neighbour(ctx, step, +1)
	case kanban.AutoMovePrevious, kanban.AutoMovePrevStep:
		target, err = e.svc.Neighbour(ctx, step, -1)
	case kanban.AutoMoveToStep:
		target, err = e.store.GetStep(ctx, a.ConfigString("step_id"))
		if err == nil && target.WorkflowID != step.WorkflowID {
			return "failed: the target step is in another workflow", true
		}
	default:
		return "failed: unknown automation type", true
	}
	if err != nil {
		return failure(err), true
	}
	if target == nil {
		return "skipped: there is no step in that direction", false
	}
	if c.chain >= MaxChain {
		return fmt.Sprintf("cut: %d automatic transitions in a row (a loop?); the task stays on %s", c.chain, step.Name), true
	}
	return e.move(ctx, t, step, target, c.next()), false
}

// move moves t from step to target for an automation (c counts the
// transitions so far): the exit and enter automations follow, in order,
// behind the current ones.
func (e *Engine) move(ctx context.Context, t *kanban.Task, from, to *kanban.WorkflowStep, c cause) string {
	moved, queued, err := e.svc.FlowMove(ctx, t.ID, to.ID)
	if err != nil {
		return failure(err)
	}
	if queued {
		return "moving to " + to.Name + ": it is full (wip_limit), so the task waits in its admission queue"
	}
	e.moved(moved.ID, from.ID, to.ID, c)
	e.freed(from.ID, 0)
	return "moved to " + to.Name
}

// failure words an automation's error: a domain error's safe message,
// else a generic one (the detail is logged by the layer that failed).
func failure(err error) string {
	if ke, ok := kanban.AsError(err); ok {
		return "failed: " + ke.Message
	}
	return "failed: internal error"
}
