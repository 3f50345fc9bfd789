package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const (
	// maxPromptsPerTurn bounds how many queued messages one turn delivers.
	maxPromptsPerTurn = 20
	// interruptGrace bounds how long an interrupted turn may take to end
	// after session/cancel before Kandev stops waiting for it.
	interruptGrace = 15 * time.Second
)

var (
	errStopped     = errors.New("stopped")
	errInterrupted = errors.New("the agent did not end its interrupted turn in time; Kandev stopped waiting for it")
)

// turns delivers pending prompts turn by turn until the run is stopped or
// the agent exits. Between turns the session is IDLE.
func (r *run) turns(l *launch) {
	ctx := r.ctx
	first := !r.resume
	for turn := 1; ; turn++ {
		prompts, err := r.m.store.PendingPrompts(ctx, r.id, maxPromptsPerTurn)
		if err != nil {
			if !r.stopped() {
				r.m.log.ErrorContext(r.ctx, "read pending prompts", "err", err)
			}
			return
		}
		// After reading the prompts: a mode change stored before a prompt
		// (an on_enter's, before its step prompt) is seen for its turn.
		plan := r.reconcile(l)
		if len(prompts) == 0 {
			r.setState(kanban.SessionIdle)
			select {
			case <-r.wake:
				turn--
				continue
			case <-ctx.Done():
				return
			case <-l.proc.done:
				return
			case <-l.conn.Done():
				if !exitsSoon(l.proc) {
					r.setFailure(errBroken.Error())
				}
				return
			case <-r.aborted:
				return
			}
		}
		if r.budgetRefused(prompts) {
			turn--
			continue
		}
		blocks, last := r.promptBlocks(l, prompts, first, plan)
		first = false
		if err := r.m.store.MarkDelivered(ctx, r.id, last); err != nil {
			if !r.stopped() {
				r.m.log.ErrorContext(r.ctx, "mark prompts delivered", "err", err)
			}
			return
		}
		if !r.oneTurn(l, turn, blocks) {
			return
		}
	}
}

// budgetRefused refuses the turn prompts would start when a budget
// covering the session is spent: the prompts are marked delivered (they
// do not run once the limit is raised; the next prompt does) and the
// refusal, naming the budget and its spend, is noted in the
// conversation. A check or a mark that fails lets the turn run (logged).
func (r *run) budgetRefused(prompts []kanban.Message) bool {
	b, err := r.m.store.SpentBudget(r.ctx, r.id)
	if err != nil {
		if !r.stopped() {
			r.m.log.ErrorContext(r.ctx, "check budgets", "err", err)
		}
		return false
	}
	if b == nil {
		return false
	}
	if err := r.m.store.MarkDelivered(r.ctx, r.id, prompts[len(prompts)-1].ID); err != nil {
		if !r.stopped() {
			r.m.log.ErrorContext(r.ctx, "mark refused prompts delivered", "err", err)
		}
		return false
	}
	r.rec.note("error", "Turn refused: "+kanban.BudgetExceededError(b).Error())
	return true
}

// oneTurn runs one turn with blocks and records how it ended; false ends
// the run's turns (stopped, aborted, the agent gone or broken).
func (r *run) oneTurn(l *launch, turn int, blocks []acp.ContentBlock) bool {
	r.turn.mu.Lock()
	r.turn.active = true
	waiting := r.turn.waits > 0
	r.turn.mu.Unlock()
	if waiting {
		r.setState(kanban.SessionWaitingForInput)
	} else {
		r.setState(kanban.SessionRunning)
	}
	r.rec.startTurn(turn)
	ev := r.turnEvent(l.task.ID)
	r.m.cfg.Events.Emit(ev)
	resp, err := r.prompt(l, blocks)
	r.turn.mu.Lock()
	r.turn.active = false
	r.turn.mu.Unlock()
	r.rec.endTurn()
	r.recordUsage(l, resp)
	ev.Ended, ev.StopReason = true, string(resp.StopReason)
	if err != nil {
		ev.StopReason = "error"
	}
	if err == nil || !errors.Is(err, errStopped) {
		r.m.cfg.Events.Emit(ev)
	}
	if err == nil {
		if resp.StopReason != acp.StopReasonEndTurn {
			r.rec.note("status", "The agent ended its turn: "+string(resp.StopReason)+".")
		}
		return true
	}
	var silent silentError
	switch {
	case errors.Is(err, errStopped) || processExited(l.proc) || errors.Is(err, errAborted):
		return false
	case errors.As(err, &silent):
		r.setFailure(err.Error())
		return false
	case errors.Is(err, errBroken) || connBroken(l.conn):
		if !exitsSoon(l.proc) {
			r.setFailure(errBroken.Error())
		}
		return false
	}
	msg := "The agent's turn failed."
	if errors.Is(err, errInterrupted) {
		msg = "The agent's turn was interrupted: " + err.Error() + "."
	}
	r.rec.note("error", msg)
	return true
}

// turnEvent describes a turn starting now on the task (its current step).
func (r *run) turnEvent(taskID string) kanban.TurnEvent {
	ev := kanban.TurnEvent{SessionID: r.id, TaskID: taskID, StartedAt: kanban.Now()}
	if t, err := r.m.store.GetTask(r.ctx, taskID); err == nil {
		ev.StepID = t.WorkflowStepID
	}
	return ev
}

func processExited(p *process) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// prompt runs one turn. A stop cancels it at once; an interrupt sends
// session/cancel and waits (bounded) for the agent to end the turn.
func (r *run) prompt(l *launch, blocks []acp.ContentBlock) (acp.PromptResponse, error) {
	// The prompt outlives a stop: the agent is sent session/cancel, and
	// the request ends with its answer or its connection.
	ctx, cancel := context.WithCancel(r.keep())
	defer cancel()
	conn := l.conn
	r.turn.mu.Lock()
	sid := r.turn.agentSID
	r.turn.mu.Unlock()
	type result struct {
		resp acp.PromptResponse
		err  error
	}
	done := make(chan result, 1)
	r.seen()
	go func() {
		resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: blocks})
		done <- result{resp, err}
	}()
	watching := make(chan struct{})
	defer close(watching)
	abandon := r.watchTurn(conn, watching)
	var grace, resend <-chan time.Time
	for {
		select {
		case res := <-done:
			return res.resp, res.err
		case err := <-abandon:
			cancel()
			return acp.PromptResponse{}, err
		case <-r.ctx.Done():
			_ = conn.Cancel(r.keep(), acp.CancelNotification{SessionId: sid}) // best effort: the agent is stopped next
			return acp.PromptResponse{}, errStopped
		case <-r.interrupts:
			if grace == nil {
				t := time.NewTimer(interruptGrace)
				defer t.Stop()
				grace = t.C
				// A cancel that reached the agent before the prompt did is
				// lost (seen under load): repeat it every second until the
				// turn ends. session/cancel is idempotent, and stdin keeps
				// every resend ahead of the next turn's prompt.
				tk := time.NewTicker(time.Second)
				defer tk.Stop()
				resend = tk.C
			}
		case <-resend:
			_ = conn.Cancel(r.keep(), acp.CancelNotification{SessionId: sid}) // best effort, repeated
		case <-grace:
			cancel()
			<-done
			return acp.PromptResponse{}, errInterrupted
		}
	}
}

// promptBlocks turns pending prompt messages into one turn's content: in
// plan mode the plan-mode instructions first; on the session's first turn
// the workflow's prompt (as "Workflow instructions") and the current step's
// prompt (recorded in the conversation as the workflow's prompt) — with a
// {{task_prompt}} in it replaced by the first message, which it then stands
// for; then each message (one from another task says so on a line of its
// own). last is the newest message the turn delivers.
func (r *run) promptBlocks(l *launch, prompts []kanban.Message, first, plan bool) (blocks []acp.ContentBlock, last string) {
	last = prompts[len(prompts)-1].ID
	if plan {
		blocks = append(blocks, acp.TextBlock(planModeText))
	}
	if first {
		if w, err := r.m.store.GetWorkflow(r.ctx, l.task.WorkflowID); err == nil && strings.TrimSpace(w.Prompt) != "" {
			blocks = append(blocks, acp.TextBlock("## Workflow instructions\n\n"+w.Prompt))
		}
		if step, err := r.m.store.GetStep(r.ctx, l.task.WorkflowStepID); err == nil && step.Prompt != "" {
			text, combined := kanban.StepPromptWith(step.Prompt, prompts[0].Content)
			if combined {
				prompts = prompts[1:]
			}
			blocks = append(blocks, acp.TextBlock(text))
			if m, err := r.m.store.AppendMessage(r.ctx, kanban.Message{SessionID: r.id, Author: "workflow",
				Type: "prompt", Content: text}); err == nil {
				r.m.publishMessage(r.ctx, m)
				last = m.ID
			}
		}
	}
	for _, m := range prompts {
		text := m.Content
		if strings.HasPrefix(m.Author, "task:") {
			text = "Message from " + m.Author + ":\n" + text
		}
		blocks = append(blocks, acp.TextBlock(text))
	}
	return blocks, last
}

// finish stops the agent if it still runs and records how the session
// ended; the cleanup script runs once the session has ended. l is nil
// when the run stopped before it resolved its launch.
func (r *run) finish(l *launch) {
	why := stopMode(r.stopWhy.Load())
	var proc *process
	if l != nil {
		proc = l.proc
	}
	if proc != nil {
		proc.terminate(r.m.cfg.StopGrace)
	}
	switch why {
	case stopCancel:
	case stopEvict:
		r.rec.note("status", "The idle agent was stopped to free an agent slot for a queued session.")
		r.m.update(r.keep(), r.id, kanban.RunUpdate{State: kanban.SessionCompleted})
	case stopShutdown:
		r.rec.note("status", "The backend shut down and stopped the agent; the session resumes when it starts again.")
		return
	default:
		if proc == nil {
			return
		}
		if reason := r.failureReason(); reason != "" {
			r.fail(reason, l)
			break
		}
		code := proc.exitCode()
		if code == 0 {
			r.rec.note("status", "The agent exited.")
			r.m.update(r.keep(), r.id, kanban.RunUpdate{State: kanban.SessionCompleted, ExitCode: &code})
		} else {
			r.fail(fmt.Sprintf("the agent exited with code %d", code), l)
		}
	}
	r.cleanup(l)
}

// fail records a failed session with its reason and, when the agent ran,
// its exit code and the tail of its stderr (redacted). l is nil when the
// run failed before it resolved its launch.
func (r *run) fail(reason string, l *launch) {
	var u kanban.RunUpdate
	u.State = kanban.SessionFailed
	msg := reason
	if l != nil && l.proc != nil {
		<-l.proc.done
		code := l.proc.exitCode()
		u.ExitCode = &code
	}
	if tail := stderrEnd(l, 2048); tail != "" {
		msg += "\nstderr (last lines):\n" + tail
	}
	u.Error = &msg
	r.rec.note("error", "The session failed: "+msg)
	r.m.update(r.keep(), r.id, u)
}

// stderrEnd is the end of the launched agent's stderr, redacted, at most
// n bytes ("" when l is nil).
func stderrEnd(l *launch, n int) string {
	if l == nil {
		return ""
	}
	s := strings.TrimSpace(l.redact.String(l.stderr.String()))
	if len(s) > n {
		s = s[len(s)-n:]
		s = strings.ToValidUTF8(s, "")
	}
	return s
}

// cleanup runs the executor's cleanup script after the session ended.
func (r *run) cleanup(l *launch) {
	if l == nil || l.executor == nil || l.executor.CleanupScript == "" {
		return
	}
	_ = r.script(l, "cleanup", l.executor.CleanupScript) // recorded; the session has ended either way
}
