package flow

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// modeIs checks the task's stored agent mode and that the runtime was told.
func modeIs(want kanban.AgentMode) func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, _ string) {
	return func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, _ string) {
		want.TaskID = task.ID
		got := h.mode(task.ID)
		if got.UpdatedAt.IsZero() {
			h.t.Fatal("the mode was never written")
		}
		if got.UpdatedAt = (time.Time{}); got != want {
			h.t.Fatalf("agent mode %+v, want %+v; records %v", got, want, h.records(task.ID))
		}
		if h.notifications(task.ID) == 0 {
			h.t.Fatal("the runtime was not told of the mode change")
		}
	}
}

// TestOnEnterSetsUpAgentFirst: on on_enter, the automations that set up
// the agent run before the step's prompt is queued (so its turn is in
// the new mode), the others after it; {{task_prompt}} in the step prompt
// becomes the task's prompt.
func TestOnEnterSetsUpAgentFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"A"},{"name":"Plan","prompt":"Plan this: {{task_prompt}} (no code).","events":{"on_enter":[
		{"type":"send_prompt","config":{"prompt":"after the step prompt"}},
		{"type":"enable_plan_mode"},
		{"type":"set_session_mode","config":{"mode":"plan"}},
		{"type":"reset_agent_context"}]}}]`)
	var out struct{ Task *kanban.Task }
	f := false
	h.must(kanban.ActionTaskCreate, map[string]any{"workspace_id": h.ws, "workflow_id": steps[0].WorkflowID, "workflow_step_id": steps[0].ID,
		"title": "T", "prompt": "Fix the login bug", "start_agent": &f}, &out)
	h.settle()
	sess := h.managedSession(out.Task.ID, kanban.SessionIdle)
	h.trigger(kanban.EventEnter, out.Task, steps[0], steps[1])

	want := []string{
		"status: on_enter of Plan, enable_plan_mode: plan mode on",
		"status: on_enter of Plan, set_session_mode: the task's agents switch to ACP session mode plan",
		"status: on_enter of Plan, reset_agent_context: the next turn of session " + sess.ID + " starts in a fresh agent session",
		"status: Entered Plan: its prompt is queued",
		"status: on_enter of Plan, send_prompt: queued",
	}
	recs := h.records(out.Task.ID)
	if len(recs) != len(want) {
		t.Fatalf("records:\n%s", strings.Join(recs, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(recs[i], want[i]) {
			t.Fatalf("record %d: got %q, want it to start with %q", i, recs[i], want[i])
		}
	}
	prompts, err := h.st.PendingPrompts(context.Background(), sess.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts) != 2 || prompts[0].Content != "Plan this: Fix the login bug (no code)." || prompts[1].Content != "after the step prompt" {
		t.Fatalf("prompts %+v", prompts)
	}
	if m := h.mode(out.Task.ID); !m.PlanMode || m.SessionMode != "plan" || m.ResetSessionID != sess.ID {
		t.Fatalf("mode %+v", m)
	}
}

// TestPlanModeRecords: enabling twice, disabling twice and resetting with
// no live session each say what happened; a step prompt without the
// placeholder is queued as it is.
func TestPlanModeRecords(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"A"},{"name":"S","prompt":"Review it.","events":{
		"on_enter":[{"type":"enable_plan_mode"},{"type":"enable_plan_mode"},{"type":"reset_agent_context"}],
		"on_exit":[{"type":"disable_plan_mode"},{"type":"disable_plan_mode"}]}}]`)
	task := h.task("T", steps[0])
	h.trigger(kanban.EventEnter, task, steps[0], steps[1])
	h.trigger(kanban.EventExit, task, steps[0], steps[1])
	want := []string{
		"status: on_enter of S, enable_plan_mode: plan mode on: the task's agents get the plan-mode instructions with every prompt",
		"status: on_enter of S, enable_plan_mode: plan mode was already on",
		"status: on_enter of S, reset_agent_context: skipped: the task has no live agent session (a new one starts with a fresh context)",
		"status: on_exit of S, disable_plan_mode: plan mode off",
		"status: on_exit of S, disable_plan_mode: plan mode was already off",
	}
	if got := h.records(task.ID); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	sess := h.managedSession(task.ID, kanban.SessionIdle)
	h.trigger(kanban.EventEnter, task, steps[0], steps[1])
	prompts, err := h.st.PendingPrompts(context.Background(), sess.ID, 10)
	if err != nil || len(prompts) != 1 || prompts[0].Content != "Review it." {
		t.Fatalf("prompts %+v, %v", prompts, err)
	}
}

// TestModeAutomationsRefused: set_session_mode needs a non-empty mode
// within bounds, and no mode type takes settings it does not declare; a
// refused workflow is not created.
func TestModeAutomationsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	count := func() int {
		l, err := h.st.ListWorkflows(context.Background(), h.ws, kanban.Page{Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	before := count()
	for _, bad := range []string{
		`{"type":"set_session_mode"}`,
		`{"type":"set_session_mode","config":{}}`,
		`{"type":"set_session_mode","config":{"mode":""}}`,
		`{"type":"set_session_mode","config":{"mode":7}}`,
		`{"type":"set_session_mode","config":{"mode":"` + strings.Repeat("m", kanban.MaxSessionModeLen+1) + `"}}`,
		`{"type":"enable_plan_mode","config":{"mode":"plan"}}`,
		`{"type":"reset_agent_context","config":{"hard":true}}`,
	} {
		raw := json.RawMessage(`{"workspace_id":"` + h.ws + `","name":"Bad","steps":[{"name":"S","events":{"on_enter":[` + bad + `]}}]}`)
		if err := h.do(kanban.ActionWorkflowCreate, raw, nil); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Fatalf("%s: got %v, want VALIDATION_ERROR", bad, err)
		}
	}
	if after := count(); after != before {
		t.Fatalf("%d workflows after refusals, want %d", after, before)
	}
}

// TestTurnStartMoveQueuesNoStepPrompt: a turn that starts on Done, whose
// on_turn_start takes the task back to Review, is Review's work: Review's
// prompt is not queued as another turn (which would start on Done again
// and go round for ever, as the PR Review template did); the same step
// entered by a move still gets its prompt queued.
func TestTurnStartMoveQueuesNoStepPrompt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"Review","prompt":"Review it.","events":{"on_turn_complete":[{"type":"move_to_next"}]}},
		{"name":"Done","events":{"on_turn_start":[{"type":"move_to_previous"}]}}]`)
	task := h.task("T", steps[1])
	sess := h.managedSession(task.ID, kanban.SessionIdle)
	h.events.Emit(kanban.TurnEvent{TaskID: task.ID, SessionID: sess.ID, StepID: steps[1].ID, StartedAt: kanban.Now()})
	h.settle()
	if got := h.get(task.ID).WorkflowStepID; got != steps[0].ID {
		t.Fatalf("the turn's start left the task on %s, want Review", got)
	}
	pending := func() int {
		prompts, err := h.st.PendingPrompts(context.Background(), sess.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(prompts)
	}
	if n := pending(); n != 0 || h.hasRecord(task.ID, "Entered Review") {
		t.Fatalf("%d prompts queued by a turn-start move; records %v", n, h.records(task.ID))
	}
	if err := h.move(task.ID, steps[1].ID); err != nil {
		t.Fatal(err)
	}
	if err := h.move(task.ID, steps[0].ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if n := pending(); n != 1 || !h.hasRecord(task.ID, "Entered Review: its prompt is queued") {
		t.Fatalf("a move to Review queued %d prompts; records %v", n, h.records(task.ID))
	}
}
