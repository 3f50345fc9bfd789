package flow

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// trigger makes event happen on step s for task t.
func (h *harness) trigger(event string, t *kanban.Task, a, s kanban.WorkflowStep) {
	h.t.Helper()
	switch event {
	case kanban.EventEnter:
		if err := h.move(t.ID, s.ID); err != nil {
			h.t.Fatal(err)
		}
	case kanban.EventExit:
		if err := h.move(t.ID, a.ID); err != nil {
			h.t.Fatal(err)
		}
	case kanban.EventComment:
		h.events.Emit(kanban.PullRequestCommented{TaskID: t.ID, PullRequestID: "pr"})
	case kanban.EventPRMerged:
		h.events.Emit(kanban.PullRequestMerged{TaskID: t.ID, PullRequestID: "pr"})
	case kanban.EventAgentError:
		h.events.Emit(kanban.AgentFailed{TaskID: t.ID, SessionID: "s"})
	case kanban.EventApprovalResolved:
		h.events.Emit(kanban.ApprovalResolved{TaskID: t.ID, StepID: s.ID, Outcome: kanban.QuorumApproved})
	case kanban.EventBudgetAlert:
		h.events.Emit(kanban.BudgetAlert{Scope: kanban.BudgetTask, ScopeID: t.ID, Revision: 1, Threshold: 80, Percent: 80,
			TaskID: t.ID, SessionID: "s", WorkspaceID: t.WorkspaceID})
	case kanban.EventHeartbeat:
		if _, err := h.st.UpdateStep(context.Background(), s.ID, kanban.StepUpdate{HeartbeatMinutes: new(1)}); err != nil {
			h.t.Fatal(err)
		}
		h.setNow(time.Now().Add(2 * time.Minute))
		if n := h.eng.Heartbeats(context.Background()); n != 1 {
			h.t.Fatalf("%d heartbeats fired, want 1", n)
		}
	case kanban.EventChildrenCompleted:
		n := h.steps(s.WorkflowID)
		child := h.child(t, n[len(n)-1])
		h.settle()
		h.must(kanban.ActionTaskSetState, action.TaskStateIn{TaskID: child.ID, State: kanban.TaskCompleted}, nil)
	default:
		h.events.Emit(kanban.TurnEvent{TaskID: t.ID, StepID: s.ID, StartedAt: kanban.Now(), Ended: event == kanban.EventTurnComplete, StopReason: "end_turn"})
	}
	h.settle()
}

// automationCheck checks an automation's effect on task, run on event of
// step S (between A and N).
type automationCheck func(h *harness, task *kanban.Task, a, s, n kanban.WorkflowStep, event string)

// onStep checks that the task is on the step want picks (still on A
// after an exit of S: moves on exit have nothing to move).
func onStep(want func(a, s, n kanban.WorkflowStep) string) automationCheck {
	return func(h *harness, task *kanban.Task, a, s, n kanban.WorkflowStep, event string) {
		got := h.get(task.ID).WorkflowStepID
		w := want(a, s, n)
		if event == kanban.EventExit {
			w = a.ID // the task left S: moves on exit have nothing to move
		}
		if got != w {
			h.t.Fatalf("task on step %s, want %s; records %v", got, w, h.records(task.ID))
		}
	}
}

// automationCases is one case per automation type: the automation, the
// live session or the setup it needs first, and its effect.
var automationCases = []struct {
	automation string
	live       bool // the task has a live session first
	check      automationCheck
	setup      func(h *harness, task *kanban.Task)
}{
	{`{"type":"start_agent","config":{"prompt":"First words"}}`, false, func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, _ string) {
		ss := h.sessions(task.ID)
		l, _ := h.st.ListMessages(context.Background(), kanban.MessageFilter{TaskID: task.ID, SessionID: ss[0].ID, Limit: 5})
		if len(ss) != 1 || len(l.Items) == 0 || l.Items[0].Content != "First words" {
			h.t.Fatalf("sessions %d, first message %+v", len(ss), l.Items)
		}
	}, nil},
	{`{"type":"auto_start_agent"}`, false, func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, _ string) {
		if n := len(h.sessions(task.ID)); n != 1 {
			h.t.Fatalf("%d sessions", n)
		}
	}, nil},
	{`{"type":"send_prompt","config":{"prompt":"Nudge from the workflow"}}`, true, func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, _ string) {
		l, _ := h.st.PendingPrompts(context.Background(), h.sessions(task.ID)[0].ID, 10)
		if len(l) != 1 || l[0].Content != "Nudge from the workflow" || l[0].Author != "workflow" {
			h.t.Fatalf("prompts %+v", l)
		}
	}, nil},
	{`{"type":"move_to_next"}`, false, onStep(func(_, _, n kanban.WorkflowStep) string { return n.ID }), nil},
	{`{"type":"move_to_next_step"}`, false, onStep(func(_, _, n kanban.WorkflowStep) string { return n.ID }), nil},
	{`{"type":"move_to_previous"}`, false, onStep(func(a, _, _ kanban.WorkflowStep) string { return a.ID }), nil},
	{`{"type":"move_to_previous_step"}`, false, onStep(func(a, _, _ kanban.WorkflowStep) string { return a.ID }), nil},
	{`{"type":"move_to_step","config":{"step_position":2}}`, false, onStep(func(_, _, n kanban.WorkflowStep) string { return n.ID }), nil},
	{`{"type":"set_state","config":{"state":"BLOCKED"}}`, false, func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, _ string) {
		if st := h.get(task.ID).State; st != kanban.TaskBlocked {
			h.t.Fatalf("state %s", st)
		}
	}, nil},
	{`{"type":"stop_agent","config":{"reason":"enough"}}`, true, func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, _ string) {
		if st := h.sessions(task.ID)[0].State; st != kanban.SessionCancelled {
			h.t.Fatalf("session %s", st)
		}
	}, nil},
	{`{"type":"archive"}`, false, func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, _ string) {
		if h.get(task.ID).ArchivedAt == nil {
			h.t.Fatal("not archived")
		}
	}, nil},
	{`{"type":"enable_plan_mode"}`, false, modeIs(kanban.AgentMode{PlanMode: true}), nil},
	{`{"type":"disable_plan_mode"}`, false, modeIs(kanban.AgentMode{}), func(h *harness, task *kanban.Task) {
		on := true
		if _, _, err := h.st.UpdateAgentMode(context.Background(), task.ID, kanban.AgentModeUpdate{PlanMode: &on}); err != nil {
			h.t.Fatal(err)
		}
	}},
	{`{"type":"set_session_mode","config":{"mode":"acceptEdits"}}`, false, modeIs(kanban.AgentMode{SessionMode: "acceptEdits"}), nil},
	{`{"type":"reset_agent_context"}`, false, func(h *harness, task *kanban.Task, a, s, n kanban.WorkflowStep, ev string) {
		modeIs(kanban.AgentMode{ResetSessionID: h.sessions(task.ID)[0].ID})(h, task, a, s, n, ev)
	}, func(h *harness, task *kanban.Task) { h.managedSession(task.ID, kanban.SessionIdle) }},
	{`{"type":"queue_run","config":{"reason":"Wake up: a comment"}}`, true, func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, ev string) {
		l, _ := h.st.PendingPrompts(context.Background(), h.sessions(task.ID)[0].ID, 10)
		want := "Wake up: a comment"
		if ev == kanban.EventBudgetAlert { // the agent is told which budget
			want += "\n\nBudget alert: the task budget covering this task reached its 80% threshold (80% of its limit spent)."
		}
		if ev == kanban.EventHeartbeat {
			want += "\n\n" + kanban.HeartbeatText(1)
		}
		if len(l) != 1 || l[0].Content != want || l[0].Author != "workflow" {
			h.t.Fatalf("prompts %+v", l)
		}
	}, nil},
	{`{"type":"queue_run_for_each_participant","config":{"reason":"Review it"}}`, false, func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, ev string) {
		if !h.hasRecord(task.ID, ev+" of S, queue_run_for_each_participant: skipped: the step has no participants") {
			h.t.Fatalf("records %v", h.records(task.ID))
		}
	}, nil},
	{`{"type":"clear_decisions"}`, false, func(h *harness, task *kanban.Task, _, _, _ kanban.WorkflowStep, _ string) {
		if l, _ := h.st.ListArtifacts(context.Background(), task.ID, kanban.ArtifactDecision, kanban.Page{}); len(l.Items) != 0 {
			h.t.Fatalf("%d decisions left", len(l.Items))
		}
	}, func(h *harness, task *kanban.Task) {
		if _, err := h.st.CreateArtifact(context.Background(), kanban.Artifact{TaskID: task.ID, Kind: kanban.ArtifactDecision,
			Data: []byte(`{"step_id":"x","decision":"approved","reason":"fine"}`)}); err != nil {
			h.t.Fatal(err)
		}
	}},
}

// TestEveryAutomationOnEveryEvent runs each automation type on each event
// of a step S (between A and N) and checks its effect from the database.
func TestEveryAutomationOnEveryEvent(t *testing.T) {
	t.Parallel()
	if len(automationCases) != len(kanban.AutomationTypes) {
		t.Fatalf("%d cases for %d automation types", len(automationCases), len(kanban.AutomationTypes))
	}
	for _, event := range kanban.StepEventKinds {
		for _, tc := range automationCases {
			typ := strings.SplitN(strings.TrimPrefix(tc.automation, `{"type":"`), `"`, 2)[0]
			t.Run(event+"/"+typ, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, t.TempDir())
				steps := h.workflow(fmt.Sprintf(`[{"name":"A"},{"name":"S","events":%s},{"name":"N"}]`, ev(event, tc.automation)))
				a, s, n := steps[0], steps[1], steps[2]
				start := s
				if event == kanban.EventEnter {
					start = a
				}
				task := h.task("T", start)
				if tc.live {
					h.must(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, nil)
				}
				if tc.setup != nil {
					tc.setup(h, task)
				}
				h.trigger(event, task, a, s)
				tc.check(h, task, a, s, n, event)
				if !h.hasRecord(task.ID, event+" of S, "+typ+": ") {
					t.Fatalf("no record of the run: %v", h.records(task.ID))
				}
			})
		}
	}
}

// TestOrderAndFailureIsolation: automations run in order; a failing one is
// recorded and the next still runs.
func TestOrderAndFailureIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	var prof kanban.AgentProfile
	h.must(kanban.ActionAgentProfileList, map[string]any{}, nil)
	agents, _ := h.st.ListAgents(context.Background(), kanban.Page{Limit: 1})
	h.must(kanban.ActionAgentProfileCreate, map[string]any{"agent_id": agents.Items[0].ID, "name": "doomed"}, &prof)
	steps := h.workflow(fmt.Sprintf(`[{"name":"A"},{"name":"S","events":{"on_enter":[
		{"type":"set_state","config":{"state":"BLOCKED"}},
		{"type":"start_agent","config":{"agent_profile_id":%q}},
		{"type":"send_prompt","config":{"prompt":"no one listens"}},
		{"type":"set_state","config":{"state":"REVIEW"}}]}}]`, prof.ID))
	if err := h.st.DeleteAgentProfile(context.Background(), prof.ID); err != nil {
		t.Fatal(err)
	}
	task := h.task("T", steps[0])
	h.trigger(kanban.EventEnter, task, steps[0], steps[1])
	if st := h.get(task.ID).State; st != kanban.TaskReview {
		t.Fatalf("state %s, want the last automation's REVIEW", st)
	}
	recs := h.records(task.ID)
	want := []string{"status: on_enter of S, set_state: state set to BLOCKED", "error: on_enter of S, start_agent: failed: agent profile not found",
		"status: on_enter of S, send_prompt: skipped: the task has no live agent session", "status: on_enter of S, set_state: state set to REVIEW"}
	if strings.Join(recs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant:\n%s", strings.Join(recs, "\n"), strings.Join(want, "\n"))
	}
}

// TestLoopIsCut: A's on_enter moves to B and B's on_enter back to A; the
// chain stops after MaxChain transitions with a recorded error.
func TestLoopIsCut(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"Start"},{"name":"A","events":{"on_enter":[{"type":"move_to_step","config":{"step_position":2}}]}},
		{"name":"B","events":{"on_enter":[{"type":"move_to_step","config":{"step_position":1}}]}}]`)
	task := h.task("T", steps[0])
	if err := h.move(task.ID, steps[1].ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	moves, cut := 0, 0
	for _, r := range h.records(task.ID) {
		switch {
		case strings.Contains(r, ": moved to "):
			moves++
		case strings.Contains(r, "cut: "):
			cut++
		}
	}
	if moves != MaxChain || cut != 1 {
		t.Fatalf("%d moves, %d cuts: %v", moves, cut, h.records(task.ID))
	}
}

// TestAdmissionFIFO: automation moves into a full step wait in its queue
// and are admitted oldest first as room frees; an operator's manual move
// into a full step is still refused.
func TestAdmissionFIFO(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"In","events":{"on_turn_complete":[{"type":"move_to_next"}]}},{"name":"Full","wip_limit":1},{"name":"Out"}]`)
	in, full, out := steps[0], steps[1], steps[2]
	holder := h.task("holder", full)
	t1, t2 := h.task("t1", in), h.task("t2", in)
	for _, x := range []*kanban.Task{t1, t2} {
		h.events.Emit(kanban.TurnEvent{TaskID: x.ID, StepID: in.ID, StartedAt: kanban.Now(), Ended: true, StopReason: "end_turn"})
		h.settle()
		time.Sleep(time.Millisecond) // distinct queued_at
	}
	for _, x := range []*kanban.Task{t1, t2} {
		if got := h.get(x.ID); got.QueuedForStepID != full.ID || got.WorkflowStepID != in.ID {
			t.Fatalf("%s: queued for %q on %q", x.Title, got.QueuedForStepID, got.WorkflowStepID)
		}
	}
	if err := h.move(t2.ID, full.ID); kanban.ErrorCode(err) != kanban.CodeConflict {
		t.Fatalf("manual move into a full step: %v, want CONFLICT", err)
	}
	var listed kanban.List[kanban.Task]
	h.must(kanban.ActionTaskList, action.TaskListIn{WorkspaceID: h.ws, WorkflowStepID: in.ID}, &listed)
	if len(listed.Items) != 2 || listed.Items[0].QueuedForStepID != full.ID {
		t.Fatalf("list_tasks does not show the queue: %+v", listed.Items)
	}
	if err := h.move(holder.ID, out.ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if got := h.get(t1.ID); got.WorkflowStepID != full.ID || got.QueuedForStepID != "" {
		t.Fatalf("t1 not admitted first: on %s, queued %q", got.WorkflowStepID, got.QueuedForStepID)
	}
	if got := h.get(t2.ID); got.WorkflowStepID != in.ID || got.QueuedForStepID != full.ID {
		t.Fatal("t2 admitted past the limit")
	}
	if !h.hasRecord(t1.ID, "Admitted to Full from its admission queue") {
		t.Fatalf("no admission record: %v", h.records(t1.ID))
	}
	if err := h.move(t1.ID, out.ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if got := h.get(t2.ID); got.WorkflowStepID != full.ID {
		t.Fatal("t2 not admitted once room freed")
	}
}

// TestPullFromStep: a step with room pulls the task that waited longest on
// its pull_from_step_id step.
func TestPullFromStep(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"Ready"},{"name":"Doing","wip_limit":1},{"name":"Done"}]`)
	ready, doing, done := steps[0], steps[1], steps[2]
	old := h.task("old", ready)
	time.Sleep(time.Millisecond)
	young := h.task("young", ready)
	pull := ready.ID
	h.must(kanban.ActionWorkflowStepUpdate, action.StepUpdateIn{StepID: doing.ID, PullFromStepID: &pull}, nil)
	h.settle()
	if h.get(old.ID).WorkflowStepID != doing.ID || h.get(young.ID).WorkflowStepID != ready.ID {
		t.Fatal("the oldest ready task was not pulled into Doing")
	}
	if err := h.move(old.ID, done.ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if h.get(young.ID).WorkflowStepID != doing.ID {
		t.Fatal("room in Doing did not pull the next ready task")
	}
	if !h.hasRecord(young.ID, "by the step's pull_from_step_id") {
		t.Fatalf("records %v", h.records(young.ID))
	}
}

// TestAutoAdvance: a turn's end advances an auto_advance step's task; with
// auto_advance_requires_signal only when step_complete came in that turn;
// a cancelled turn advances nothing.
func TestAutoAdvance(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"Work","auto_advance":true},{"name":"Gated","auto_advance":true,"auto_advance_requires_signal":true},{"name":"End"}]`)
	work, gated := steps[0], steps[1]
	task := h.task("T", work)
	turn := func(stop string) kanban.TurnEvent {
		return kanban.TurnEvent{TaskID: task.ID, StepID: h.get(task.ID).WorkflowStepID, StartedAt: kanban.Now(), Ended: true, StopReason: stop}
	}
	h.events.Emit(turn("cancelled"))
	h.settle()
	if h.get(task.ID).WorkflowStepID != work.ID {
		t.Fatal("a cancelled turn advanced the task")
	}
	h.events.Emit(turn("end_turn"))
	h.settle()
	if h.get(task.ID).WorkflowStepID != gated.ID {
		t.Fatal("the turn's end did not advance the task")
	}
	var sess action.SessionCreateOut
	h.must(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, &sess)
	ev := turn("end_turn")
	ev.SessionID = sess.Session.ID
	h.events.Emit(ev)
	h.settle()
	if h.get(task.ID).WorkflowStepID != gated.ID {
		t.Fatal("a gated step advanced without the signal")
	}
	ev = turn("end_turn")
	ev.SessionID = sess.Session.ID
	raw := fmt.Sprintf(`{"step_id":%q,"summary":"done"}`, gated.ID) // as step.complete records it: blockers omitted when none
	if _, err := h.st.CreateArtifact(context.Background(), kanban.Artifact{TaskID: task.ID, SessionID: sess.Session.ID,
		Kind: kanban.ArtifactStepComplete, Data: []byte(raw)}); err != nil {
		t.Fatal(err)
	}
	h.events.Emit(ev)
	h.settle()
	if h.get(task.ID).WorkflowStepID != steps[2].ID {
		t.Fatalf("the signalled turn did not advance the task: %v", h.records(task.ID))
	}
}

// TestAutoAdvanceAfterARoundTrip: a turn that starts on an auto_advance
// step whose on_turn_start moves the task away, and whose end moves it
// back (the seeded Kanban's Review ↔ In Progress when the operator answers
// the agent), does not also auto-advance it: the task moved during the
// turn. Before, it went on from Review to Done, completed.
func TestAutoAdvanceAfterARoundTrip(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"In Progress","events":` + ev("on_turn_complete", `{"type":"move_to_step","config":{"step_position":1}}`) + `},
		{"name":"Review","auto_advance":true,"events":` + ev("on_turn_start", `{"type":"move_to_previous"}`) + `},{"name":"Done"}]`)
	task := h.task("T", steps[1])
	turn := kanban.TurnEvent{TaskID: task.ID, StepID: steps[1].ID, StartedAt: kanban.Now()}
	h.events.Emit(turn)
	h.settle()
	if got := h.get(task.ID).WorkflowStepID; got != steps[0].ID {
		t.Fatalf("the turn's start left the task on %s, want In Progress", got)
	}
	turn.Ended, turn.StopReason = true, "end_turn"
	h.events.Emit(turn)
	h.settle()
	if got := h.get(task.ID).WorkflowStepID; got != steps[1].ID {
		t.Fatalf("after the turn the task is on %s, want Review (where on_turn_complete took it): %v", got, h.records(task.ID))
	}
	if h.hasRecord(task.ID, "auto_advance") {
		t.Fatalf("the task auto-advanced after its round trip: %v", h.records(task.ID))
	}
}
