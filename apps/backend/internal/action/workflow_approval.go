package action

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The participants of a step's approval (Office), as the workflow actions
// and the import check and bind them.

// checkParticipants refuses a step approval whose agent participants are
// not agent profiles usable in the workspace.
func (s *Service) checkParticipants(ctx context.Context, workspaceID string, a *kanban.StepApproval) error {
	if a == nil {
		return nil
	}
	for _, p := range a.Participants {
		if p.AgentProfileID == "" {
			continue
		}
		if err := s.checkProfiles(ctx, workspaceID, p.AgentProfileID, ""); err != nil {
			return err
		}
	}
	return nil
}

// bindParticipants matches a document step's agent participants to local
// agent profiles: one that matches nothing is refused (a review without
// its reviewer cannot run), and so are two that match the same profile.
func (s *Service) bindParticipants(ctx context.Context, ws, field string, d *DocApproval, a *kanban.StepApproval) error {
	if d == nil || a == nil {
		return nil
	}
	seen := map[string]bool{}
	for i, p := range d.Participants {
		if p.Operator {
			continue
		}
		f := fmt.Sprintf("%s.participants[%d].agent_profile", field, i)
		id, err := s.matchProfile(ctx, ws, p.AgentProfile)
		if err != nil {
			return err
		}
		if id == "" {
			return kanban.FieldError(f, "matches no local agent profile of that agent and model")
		}
		if seen[id] {
			return kanban.FieldError(f, "matches the same local agent profile as another participant")
		}
		seen[id] = true
		a.Participants[i].AgentProfileID = id
	}
	return nil
}

// checkStepUpdate checks what a step update's contract cannot: a single
// line name and the automations' rules (kanban.CheckEvents); bounds and
// required fields are the contract's.
func checkStepUpdate(in StepUpdateIn) error {
	if in.Name != nil {
		if err := kanban.SingleLine("name", *in.Name); err != nil {
			return err
		}
	}
	if in.Approval != nil && in.ClearApproval {
		return kanban.FieldError("clear_approval", "give approval or clear_approval, not both")
	}
	if err := kanban.CheckApproval("approval", in.Approval); err != nil {
		return err
	}
	return kanban.CheckEvents("events", in.Events)
}
