package action

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestQuorumOnceAcrossServices: two action layers on one database (as two
// backends are), each counting an operator approval of a step whose
// quorum is "any" at the same moment (both reach it before either
// resolves it), move the task once: one decision moves it, the other
// reports the quorum reached with no move of its own.
func TestQuorumOnceAcrossServices(t *testing.T) {
	t.Parallel()
	for range 5 {
		h := newHarness(t)
		review, next := h.steps[1], h.steps[2]
		approval := &kanban.StepApproval{Participants: []kanban.StepParticipant{{Role: "approver", Operator: true}}, Quorum: kanban.QuorumAny}
		if _, err := h.st.UpdateStep(context.Background(), review.ID, kanban.StepUpdate{Approval: approval}); err != nil {
			t.Fatal(err)
		}
		task, _, err := h.st.CreateTask(context.Background(), kanban.TaskCreate{WorkspaceID: h.ws, WorkflowStepID: review.ID, Title: "Decide"})
		if err != nil {
			t.Fatal(err)
		}
		moves := 0
		for _, o := range decideTogether(t, h, task.ID) {
			if o.Quorum == nil || !o.Quorum.Counted || o.Quorum.Outcome != kanban.QuorumApproved {
				t.Fatalf("quorum %+v", o.Quorum)
			}
			if o.Quorum.ToStepID != "" {
				moves++
			}
		}
		got, err := h.st.GetTask(context.Background(), task.ID)
		if err != nil || moves != 1 || got.WorkflowStepID != next.ID {
			t.Fatalf("%d moves, task on %s (%v), want one move to %s", moves, got.WorkflowStepID, err, next.ID)
		}
		msgs, err := h.st.ListMessages(context.Background(), kanban.MessageFilter{TaskID: task.ID, Limit: kanban.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		recorded := 0
		for _, m := range msgs.Items {
			if strings.Contains(m.Content, "quorum of "+review.Name+" was reached") {
				recorded++
			}
		}
		if recorded != 1 {
			t.Fatalf("the quorum was recorded reached %d times, want once", recorded)
		}
	}
}

// decideTogether approves taskID through two action layers on h's store
// at once, both reaching the quorum before either claims it (waiting at
// most 10 s for the other), and returns their results.
func decideTogether(t *testing.T, h *harness, taskID string) []*StepDecideOut {
	t.Helper()
	one, svc1 := mustNew(t, Deps{Store: h.st, FS: testPolicy(t)})
	two, svc2 := mustNew(t, Deps{Store: h.st, FS: testPolicy(t)})
	var reached sync.WaitGroup
	reached.Add(2)
	all := make(chan struct{})
	go func() { reached.Wait(); close(all) }()
	svc1.quorumReached = func() {
		reached.Done()
		select {
		case <-all:
		case <-time.After(10 * time.Second): // bounded: the test then fails on the moves
		}
	}
	svc2.quorumReached = svc1.quorumReached
	in := StepDecideIn{TaskID: taskID, Decision: kanban.DecisionApproved, Reason: "fine"}
	outs := make([]*StepDecideOut, 2)
	var wg sync.WaitGroup
	for i, reg := range []*Registry{one, two} {
		wg.Go(func() {
			out, err := reg.Dispatch(context.Background(), operator, kanban.ActionStepDecide, payload(t, in))
			if err != nil {
				t.Error(err)
				return
			}
			outs[i] = out.(*StepDecideOut)
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return outs
}
