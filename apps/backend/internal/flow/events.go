package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// created runs the on_enter automations of a new task's first step, then
// lets the steps that pull from it admit the task.
func (e *Engine) created(t *kanban.Task) {
	id, step := t.ID, t.WorkflowStepID
	e.do(taskKey(id), func() {
		e.enter(id, step, cause{woken: wakeSet{}}, true)
		e.arrived(step, "", 0)
	})
}

// moved runs the on_exit automations of the step a task left and the
// on_enter ones of the step it entered (a TaskMoved reaction also admits
// waiting tasks into the step it left).
func (e *Engine) moved(taskID, from, to string, c cause) {
	e.do(taskKey(taskID), func() {
		if c.woken == nil {
			c.woken = wakeSet{} // the exit and the arrival are one event
		}
		e.run(taskID, from, kanban.EventExit, c, nil)
		e.enter(taskID, to, c, false)
		e.arrived(to, from, c.chain)
	})
}

// arrived lets the steps that pull from stepID (their pull_from_step_id)
// admit what waits there, now that a task arrived on it from the step
// from: a pulling step with room takes the task at once, not only when one
// of its own tasks leaves. It runs after the arrival's on_enter
// automations, so a task they moved on is not pulled. from is told of its
// room by whoever moved the task, so it is not told again: every hop of a
// pull cascade then causes one admission, and depth (the transitions in a
// row that led here) cuts steps that pull from each other like any loop.
func (e *Engine) arrived(stepID, from string, depth int) {
	if stepID == "" {
		return
	}
	ids, err := e.store.PullingSteps(e.ctx, stepID)
	if err != nil {
		if e.ctx.Err() == nil {
			e.log.Error("workflow engine: steps pulling from a step", "step", stepID, "err", err)
		}
		return
	}
	for _, id := range ids {
		if id != from {
			e.freed(id, depth+1)
		}
	}
}

// freed queues an admission for stepID. Admissions are idempotent (each
// looks for room and takes what waits), so one already queued for the
// step and not started yet absorbs this one, keeping the deeper depth: a
// cascade then grows along one chain of transitions, cut at MaxChain,
// instead of branching (a step is told twice per hop: a task left it, a
// task arrived on its source).
func (e *Engine) freed(stepID string, depth int) {
	if stepID == "" {
		return
	}
	if depth > MaxChain {
		e.log.Warn("workflow engine: admission cascade cut", "step", stepID, "depth", depth)
		return
	}
	e.mu.Lock()
	if d, queued := e.admitting[stepID]; queued {
		e.admitting[stepID] = max(d, depth)
		e.mu.Unlock()
		return
	}
	e.admitting[stepID] = depth
	e.mu.Unlock()
	queued := e.do(stepKey(stepID), func() {
		e.mu.Lock()
		d := e.admitting[stepID]
		delete(e.admitting, stepID)
		e.mu.Unlock()
		e.admit(stepID, d)
	})
	if !queued {
		e.mu.Lock()
		delete(e.admitting, stepID)
		e.mu.Unlock()
	}
}

// turn handles a turn event of the runtime.
func (e *Engine) turn(ev kanban.TurnEvent) {
	e.do(taskKey(ev.TaskID), func() {
		if s, err := e.store.GetSession(e.ctx, ev.SessionID); err == nil && kanban.IsParticipantSession(s.Name) {
			return // a reviewer's turn moves nothing: its decision does
		}
		if !ev.Ended {
			e.run(ev.TaskID, "", kanban.EventTurnStart, turnStartCause(ev), nil)
			return
		}
		if ev.StopReason == "error" || (ev.StopReason == "cancelled" && !e.cancelCounts(ev.StepID)) {
			return // a failed turn, or an interrupted one, completes nothing (unless the step says so)
		}
		e.turnEnded(ev)
	})
}

// cause is what led to the automations running now: how many automatic
// transitions in a row (chain, cut at MaxChain), and the agent turn that
// started the chain, if one did.
type cause struct {
	chain int
	turn  *turnOrigin
	// woken are the agents the chain's queue_runs woke (one run per
	// target per event); made when the chain's first automations run.
	woken wakeSet
	// detail is what the event says that the agents it wakes are told
	// too (a comment's author and text).
	detail string
	// at is when the event happened: clear_decisions forgets the
	// decisions recorded before it, never one made while the event waited
	// on the task's queue. on_enter's is the task's entry into the step;
	// zero is when the automations run.
	at time.Time
}

// eventCause is the cause of an event from outside the board's moves,
// happening now.
func eventCause(detail string) cause {
	return cause{woken: wakeSet{}, detail: detail, at: kanban.Now()}
}

// turnOrigin is the agent turn a chain of automations started from. It
// is shared by the whole chain, which runs in order on its task's queue.
type turnOrigin struct {
	session string
	// replaced: a stop_agent of the chain stopped the agent, so a later
	// start_agent of the chain replaces it.
	replaced bool
	// starting: the chain is the turn's on_turn_start. The turn that is
	// starting (the operator's message, a queued prompt) is the agent's
	// work on the step it brings the task to, so that step's prompt is not
	// queued as another turn (as the reference: a turn-start transition
	// starts no agent work of its own). Queued, it would start its own
	// turn where the task was left, whose on_turn_start would move the
	// task and queue the prompt again, for ever.
	starting bool
}

func turnCause(ev kanban.TurnEvent) cause {
	return cause{turn: &turnOrigin{session: ev.SessionID}, woken: wakeSet{}, at: kanban.Now()}
}

// turnStartCause is the cause of a turn's on_turn_start.
func turnStartCause(ev kanban.TurnEvent) cause {
	return cause{turn: &turnOrigin{session: ev.SessionID, starting: true}, woken: wakeSet{}, at: kanban.Now()}
}

// promptsStep reports whether entering a step for c delivers its prompt.
func (c cause) promptsStep() bool { return c.turn == nil || !c.turn.starting }

// next is the cause of the transition c makes.
func (c cause) next() cause {
	return cause{chain: c.chain + 1, turn: c.turn, woken: c.woken, detail: c.detail}
}

// enter runs on_enter: first the automations that set up the agent (its
// mode, its context), then delivers the step's prompt to the task's
// running agent (a new one gets it before the task's prompt from the
// runtime; a turn starting now does that step's work: see
// turnOrigin.starting), then the other automations.
func (e *Engine) enter(taskID, stepID string, c cause, created bool) {
	ctx := e.ctx
	prompts := !created && c.promptsStep()
	if stepID != "" {
		// Most steps have no on_enter automation and no prompt to deliver:
		// one read of the step tells, and nothing else is read then.
		if step, err := e.store.GetStep(ctx, stepID); err == nil && len(step.Events[kanban.EventEnter]) == 0 && (step.Prompt == "" || !prompts) {
			return
		}
	}
	e.runWhere(taskID, stepID, kanban.EventEnter, c, nil, kanban.StepAction.SetsUpAgent)
	if step, err := e.store.GetStep(ctx, stepID); err == nil && step.Prompt != "" && prompts {
		e.stepPrompt(ctx, taskID, step)
	}
	e.runWhere(taskID, stepID, kanban.EventEnter, c, nil, func(a kanban.StepAction) bool { return !a.SetsUpAgent() })
}

// stepPrompt queues a step's prompt to the task's running agent; a
// {{task_prompt}} in it is replaced by the task's prompt.
func (e *Engine) stepPrompt(ctx context.Context, taskID string, step *kanban.WorkflowStep) {
	sess, err := e.svc.LiveSession(ctx, taskID)
	if err != nil || !sess.Managed || sess.State == kanban.SessionQueued || sess.State == kanban.SessionStarting {
		return
	}
	t, err := e.store.GetTask(ctx, taskID)
	if err != nil {
		return
	}
	text, _ := kanban.StepPromptWith(step.Prompt, t.Prompt())
	if _, err := e.svc.SendPrompt(ctx, taskID, "workflow", text); err == nil {
		e.svc.Record(ctx, taskID, "status", fmt.Sprintf("Entered %s: its prompt is queued as the agent's next turn.", step.Name))
	}
}

// turnEnded runs on_turn_complete and auto-advances the task.
func (e *Engine) turnEnded(ev kanban.TurnEvent) {
	ctx := e.ctx
	t, err := e.store.GetTask(ctx, ev.TaskID)
	if err != nil || t.ArchivedAt != nil {
		return
	}
	signalled := e.signalled(ctx, ev)
	c := turnCause(ev)
	e.run(t.ID, t.WorkflowStepID, kanban.EventTurnComplete, c, &signalled)
	if t, err = e.store.GetTask(ctx, ev.TaskID); err != nil || t.ArchivedAt != nil || t.WorkflowStepID != ev.StepID ||
		t.StepEnteredAt.After(ev.StartedAt) || t.QueuedForStepID != "" {
		// It moved during the turn or by an automation (also when that
		// brought it back to the step the turn started on), or waits for
		// a step already.
		return
	}
	step, err := e.store.GetStep(ctx, t.WorkflowStepID)
	if err != nil || !step.AutoAdvance {
		return
	}
	if step.AutoAdvanceRequiresSignal && !signalled {
		return
	}
	next, err := e.svc.Neighbour(ctx, step, +1)
	if err != nil || next == nil {
		return
	}
	e.svc.Record(ctx, t.ID, "status", "auto_advance: "+e.move(ctx, t, step, next, c))
}

// signalled reports whether the turn's session called step_complete_kandev
// for the turn's step during the turn.
func (e *Engine) signalled(ctx context.Context, ev kanban.TurnEvent) bool {
	a, err := e.store.LatestArtifact(ctx, ev.TaskID, kanban.ArtifactStepComplete)
	if err != nil || a.SessionID != ev.SessionID || a.CreatedAt.Before(ev.StartedAt) {
		return false
	}
	var d struct {
		StepID string `json:"step_id"`
	}
	return json.Unmarshal(a.Data, &d) == nil && d.StepID == ev.StepID
}

// admit moves waiting tasks onto a step while it has room.
func (e *Engine) admit(stepID string, depth int) {
	ctx := e.ctx
	// Only tasks already on the source step when the admission started
	// are pulled: a task that comes back meanwhile (steps that pull from
	// each other) is its own arrival, counted deeper, not another round of
	// this loop.
	start := kanban.Now()
	for range maxAdmissions {
		a, err := e.store.AdmitNext(ctx, stepID, start)
		if err != nil {
			if kanban.ErrorCode(err) != kanban.CodeNotFound && ctx.Err() == nil {
				e.log.Error("workflow engine: admit", "step", stepID, "err", err)
			}
			return
		}
		if a == nil {
			return
		}
		e.svc.Admitted(a.Task)
		how := "from its admission queue"
		if a.Pulled {
			how = "by the step's pull_from_step_id"
		}
		step := stepID
		if st, err := e.store.GetStep(ctx, stepID); err == nil {
			step = st.Name
		}
		e.svc.Record(ctx, a.Task.ID, "status", fmt.Sprintf("Admitted to %s %s.", step, how))
		// The admission is the depth-th transition of its cascade: the
		// task's automations and the pulls its arrival causes go on
		// counting from there (MaxChain cuts a loop of pulls).
		e.moved(a.Task.ID, a.FromStepID, stepID, cause{chain: depth})
		e.freed(a.FromStepID, depth+1)
	}
}

// cancelCounts reports whether the step runs on_turn_complete for turns
// that were cancelled (cancel_triggers_turn_complete).
func (e *Engine) cancelCounts(stepID string) bool {
	st, err := e.store.GetStep(e.ctx, stepID)
	return err == nil && st.CancelTriggersTurnComplete
}
