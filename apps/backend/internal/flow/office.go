package flow

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The Office automations: queue_run and queue_run_for_each_participant
// wake agents on the task, clear_decisions forgets its decisions. An
// event's chain of automations wakes each target at most once (see
// cause.woken): two queue_runs of one event for the same agent queue one
// run.

// wakeSet is the targets an event's chain has woken, by key ("primary",
// or a participant's key).
type wakeSet map[string]bool

// execOffice performs an Office automation (ok false for another type).
func (e *Engine) execOffice(ctx context.Context, t *kanban.Task, step *kanban.WorkflowStep, a kanban.StepAction, c cause) (string, bool, bool) {
	switch a.Type {
	case kanban.AutoQueueRun:
		var p *kanban.StepParticipant
		if a.ConfigString("target") == kanban.WakeParticipant {
			found, ok := step.Approval.Participant(a.ConfigString("agent_profile_id"))
			if !ok || found.Operator {
				return "failed: agent_profile_id is no agent participant of the step", true, true
			}
			p = &found
		}
		out, failed := e.wake(ctx, t, p, a.ConfigString("reason"), c)
		return out, failed, true
	case kanban.AutoQueueRunParticipants:
		out, failed := e.wakeParticipants(ctx, t, step, a.ConfigString("role"), a.ConfigString("reason"), c)
		return out, failed, true
	case kanban.AutoClearDecisions:
		n, err := e.svc.ClearDecisions(ctx, t.ID, c.at)
		if err != nil {
			return failure(err), true, true
		}
		return fmt.Sprintf("cleared %d decision(s)", n), false, true
	}
	return "", false, false
}

// wake wakes one target (p nil: the primary agent) unless the event woke
// it already.
func (e *Engine) wake(ctx context.Context, t *kanban.Task, p *kanban.StepParticipant, reason string, c cause) (string, bool) {
	key, who := kanban.WakePrimary, "the primary agent"
	if p != nil {
		key, who = p.Key(), "participant "+p.AgentProfileID+" ("+p.Role+")"
	}
	if c.woken != nil {
		if c.woken[key] {
			return "skipped: " + who + " was already woken for this event", false
		}
		c.woken[key] = true
	}
	if c.detail != "" {
		reason += "\n\n" + c.detail
	}
	sess, err := e.svc.WakeAgent(ctx, t.ID, action.Wake{Participant: p, Reason: reason})
	if err != nil {
		return failure(err), true
	}
	return "woke " + who + " in session " + sess.ID, false
}

// wakeParticipants wakes every agent participant of the step (of role,
// when given).
func (e *Engine) wakeParticipants(ctx context.Context, t *kanban.Task, step *kanban.WorkflowStep, role, reason string, c cause) (string, bool) {
	if step.Approval == nil {
		return "skipped: the step has no participants", false
	}
	n, failed := 0, false
	for _, p := range step.Approval.Participants {
		if p.Operator || role != "" && p.Role != role {
			continue
		}
		out, bad := e.wake(ctx, t, &p, reason, c)
		e.svc.Record(ctx, t.ID, map[bool]string{false: "status", true: "error"}[bad], "queue_run_for_each_participant: "+out)
		failed = failed || bad
		n++
	}
	return fmt.Sprintf("%d participant(s) woken or skipped", n), failed
}
