package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// The operator's approvals inbox (approval.list): the tasks on the steps
// that list the operator among their participants, with the decisions of
// the current visit, so the board can show what waits on the operator
// and decide it there.

// PendingApproval is one task on a step the operator decides on.
type PendingApproval struct {
	Task *kanban.Task `json:"task"`
	Step ApprovalStep `json:"step"`
	// Decisions are the step's participants, in its order, with the
	// decision each made on this visit of the step (none yet: empty).
	Decisions []ApprovalDecision `json:"decisions"`
	// YourDecision is the operator's decision on this visit ("": none).
	YourDecision string `json:"your_decision,omitempty"`
}

// ApprovalStep is the step a pending approval is on.
type ApprovalStep struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Role   string `json:"role"` // the operator's role on it
	Quorum string `json:"quorum"`
	Count  int    `json:"count,omitempty"`
}

// ApprovalDecision is one participant and its decision on the visit.
type ApprovalDecision struct {
	Role           string `json:"role"`
	Operator       bool   `json:"operator,omitempty"`
	AgentProfileID string `json:"agent_profile_id,omitempty"`
	Decision       string `json:"decision,omitempty"`
	Reason         string `json:"reason,omitempty"`
}

var _ = declare(Def[WorkflowListIn, *kanban.List[PendingApproval]]{
	Name:   kanban.ActionApprovalList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{"workspace_id": idProp("The workspace.")}), "workspace_id"),
	Run:    (*Service).listApprovals,
})

func (s *Service) listApprovals(ctx context.Context, _ Principal, in WorkflowListIn) (*kanban.List[PendingApproval], error) {
	steps, err := s.store.OperatorApprovalSteps(ctx, in.WorkspaceID)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*kanban.WorkflowStep, len(steps))
	ids := make([]string, len(steps))
	for i := range steps {
		byID[steps[i].ID], ids[i] = &steps[i], steps[i].ID
	}
	tasks, err := s.store.ListTasksOnSteps(ctx, ids, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	if err != nil {
		return nil, err
	}
	out := &kanban.List[PendingApproval]{Items: make([]PendingApproval, 0, len(tasks.Items)), NextCursor: tasks.NextCursor}
	for i := range tasks.Items {
		t := &tasks.Items[i]
		st := byID[t.WorkflowStepID]
		decided, err := s.stepDecisions(ctx, t, st.ID)
		if err != nil {
			return nil, err
		}
		me, _ := st.Approval.Participant(kanban.ParticipantOperator)
		p := PendingApproval{Task: t, Step: ApprovalStep{ID: st.ID, Name: st.Name, Role: me.Role, Quorum: st.Approval.Quorum,
			Count: st.Approval.Count}, Decisions: make([]ApprovalDecision, 0, len(st.Approval.Participants)),
			YourDecision: decided[kanban.ParticipantOperator].Decision}
		for _, q := range st.Approval.Participants {
			d := decided[q.Key()]
			p.Decisions = append(p.Decisions, ApprovalDecision{Role: q.Role, Operator: q.Operator, AgentProfileID: q.AgentProfileID,
				Decision: d.Decision, Reason: d.Reason})
		}
		out.Items = append(out.Items, p)
	}
	return out, nil
}
