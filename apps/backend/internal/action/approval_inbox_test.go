package action

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestApprovalInbox: approval.list pages the live tasks on the steps that
// list the operator as a participant, oldest arrival first, with the
// participants' decisions of the visit (the operator's own as
// your_decision once made); a task elsewhere or archived is not listed; a
// session may not read it; an unknown workspace is NOT_FOUND.
func TestApprovalInbox(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	_, reviewer := h.firstAgent()
	review := h.steps[1]
	approval := &kanban.StepApproval{Participants: []kanban.StepParticipant{{Role: "approver", Operator: true},
		{Role: "reviewer", AgentProfileID: reviewer.ID}}, Quorum: kanban.QuorumAll}
	if _, err := h.st.UpdateStep(ctx, review.ID, kanban.StepUpdate{Approval: approval}); err != nil {
		t.Fatal(err)
	}
	var waiting []*kanban.Task
	for _, title := range []string{"first", "second", "third"} {
		task, _, err := h.st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: h.ws, WorkflowStepID: review.ID, Title: title})
		if err != nil {
			t.Fatal(err)
		}
		waiting = append(waiting, task)
	}
	h.task("elsewhere")
	if _, err := h.st.ArchiveTask(ctx, waiting[2].ID); err != nil {
		t.Fatal(err)
	}
	call[StepDecideOut](h, operator, kanban.ActionStepDecide, StepDecideIn{TaskID: waiting[1].ID, Decision: kanban.DecisionApproved, Reason: "fine"})
	page := call[kanban.List[PendingApproval]](h, operator, kanban.ActionApprovalList, `{"workspace_id":"`+h.ws+`","limit":1}`)
	if len(page.Items) != 1 || page.NextCursor == "" || page.Items[0].Task.ID != waiting[0].ID || page.Items[0].YourDecision != "" {
		t.Fatalf("first page = %+v", page)
	}
	first := page.Items[0]
	if first.Step.ID != review.ID || first.Step.Role != "approver" || first.Step.Quorum != kanban.QuorumAll || len(first.Decisions) != 2 ||
		first.Decisions[0].Decision != "" || !first.Decisions[0].Operator || first.Decisions[1].AgentProfileID != reviewer.ID {
		t.Fatalf("first = %+v", first)
	}
	rest := call[kanban.List[PendingApproval]](h, operator, kanban.ActionApprovalList, `{"workspace_id":"`+h.ws+`","limit":1,"cursor":"`+page.NextCursor+`"}`)
	if len(rest.Items) != 1 || rest.NextCursor != "" || rest.Items[0].Task.ID != waiting[1].ID ||
		rest.Items[0].YourDecision != kanban.DecisionApproved || rest.Items[0].Decisions[0].Reason != "fine" {
		t.Fatalf("second page = %+v", rest)
	}
	h.refuse(h.session(waiting[0], kanban.ModeOffice), kanban.ActionApprovalList, `{"workspace_id":"`+h.ws+`"}`, kanban.CodeForbidden)
	h.refuse(operator, kanban.ActionApprovalList, `{"workspace_id":"nope"}`, kanban.CodeNotFound)
}
