package action

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestStepCompleteAdvances(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("work") // on Backlog, which auto-advances
	sess := h.session(task, kanban.ModeTask)
	h.refuse(operator, kanban.ActionStepComplete, StepCompleteIn{Summary: "x"}, kanban.CodeForbidden)

	out := call[StepCompleteOut](h, sess, kanban.ActionStepComplete, StepCompleteIn{Summary: "triaged", Handoff: "start with the parser", Blockers: "needs a key"})
	if !out.Advanced || out.FromStepID != h.steps[0].ID || out.ToStepID != h.steps[1].ID || out.Task.WorkflowStepID != h.steps[1].ID {
		t.Fatalf("step.complete on Backlog: got %+v, want a move to In Progress", out)
	}
	var data stepCompleteData
	if err := json.Unmarshal(out.Artifact.Data, &data); err != nil || data.Summary != "triaged" || data.StepID != h.steps[0].ID || data.Blockers != "needs a key" {
		t.Errorf("recorded signal: got %s (%v), want summary, step and blockers", out.Artifact.Data, err)
	}
	if !h.pub.has(WorkspaceTopic(h.ws), kanban.EventTaskMoved.Name()) {
		t.Errorf("task.moved: not published")
	}

	// A full next step keeps the task where it is; the signal is recorded.
	limit := 1
	if _, err := h.st.UpdateStep(context.Background(), h.steps[2].ID, kanban.StepUpdate{WIPLimit: &limit}); err != nil {
		t.Fatal(err)
	}
	occupant := h.task("occupant")
	if _, err := h.st.MoveTask(context.Background(), occupant.ID, h.steps[2].ID, -1); err != nil {
		t.Fatal(err)
	}
	full := call[StepCompleteOut](h, sess, kanban.ActionStepComplete, StepCompleteIn{Summary: "built"})
	if full.Advanced || full.Task.WorkflowStepID != h.steps[1].ID || !strings.Contains(full.Outcome, "wip_limit") {
		t.Errorf("step.complete into a full step: got %+v, want no move and a wip_limit outcome", full)
	}
	if n := h.count("task_artifacts"); n != 2 {
		t.Errorf("signals recorded: got %d, want 2", n)
	}
}

func TestStepCompleteWithoutAutoAdvance(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("done already")
	if _, err := h.st.MoveTask(context.Background(), task.ID, h.steps[3].ID, -1); err != nil { // Done: no auto-advance
		t.Fatal(err)
	}
	sess := h.session(task, kanban.ModeTask)
	out := call[StepCompleteOut](h, sess, kanban.ActionStepComplete, StepCompleteIn{Summary: "shipped"})
	if out.Advanced || out.ToStepID != "" || !strings.Contains(out.Outcome, "does not auto-advance") {
		t.Errorf("step.complete on Done: got %+v, want recorded without a move", out)
	}
	auto := true
	if _, err := h.st.UpdateStep(context.Background(), h.steps[3].ID, kanban.StepUpdate{AutoAdvance: &auto}); err != nil {
		t.Fatal(err)
	}
	last := call[StepCompleteOut](h, sess, kanban.ActionStepComplete, StepCompleteIn{Summary: "shipped again"})
	if last.Advanced || !strings.Contains(last.Outcome, "last step") {
		t.Errorf("step.complete on the last step: got %+v, want no move (last step)", last)
	}
}

func TestStepDecide(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	me := h.task("office")
	kid := h.child(me, "kid")
	sess := h.session(me, kanban.ModeOffice)
	h.refuse(sess, kanban.ActionStepDecide, StepDecideIn{TaskID: h.task("stranger").ID, Decision: kanban.DecisionApproved, Reason: "r"}, kanban.CodeForbidden)

	first := call[StepDecideOut](h, sess, kanban.ActionStepDecide, StepDecideIn{Decision: kanban.DecisionRejected, Reason: "tests missing"})
	if first.Supersedes != "" || first.Artifact.TaskID != me.ID || first.Artifact.SessionID != sess.SessionID {
		t.Errorf("first decision: got %+v, want one on the bound task superseding nothing", first)
	}
	second := call[StepDecideOut](h, sess, kanban.ActionStepDecide, StepDecideIn{TaskID: "self", Decision: kanban.DecisionApproved, Reason: "tests added"})
	if second.Supersedes != first.Artifact.ID {
		t.Errorf("second decision: supersedes %q, want %q", second.Supersedes, first.Artifact.ID)
	}
	latest := call[kanban.Artifact](h, operator, kanban.ActionArtifactLatest, ArtifactKindIn{TaskID: me.ID, Kind: kanban.ArtifactDecision})
	var d stepDecisionData
	if err := json.Unmarshal(latest.Data, &d); err != nil || d.Decision != kanban.DecisionApproved || d.StepID != me.WorkflowStepID {
		t.Errorf("latest decision: got %s (%v), want the approval on the task's step", latest.Data, err)
	}
	call[StepDecideOut](h, sess, kanban.ActionStepDecide, StepDecideIn{TaskID: kid.ID, Decision: kanban.DecisionApproved, Reason: "subtask ok"})
}
