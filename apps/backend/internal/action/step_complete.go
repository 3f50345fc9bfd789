package action

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// stepsPageLimit is the page size step.complete reads a workflow's steps by.
const stepsPageLimit = kanban.MaxLimit

// StepCompleteIn is the payload of step.complete.
type StepCompleteIn struct {
	Summary  string `json:"summary,omitzero"`
	Handoff  string `json:"handoff,omitzero"`
	Blockers string `json:"blockers,omitzero"`
}

// stepCompleteData is what a step_complete artifact records.
type stepCompleteData struct {
	StepID   string `json:"step_id"`
	Summary  string `json:"summary"`
	Handoff  string `json:"handoff,omitempty"`
	Blockers string `json:"blockers,omitempty"`
}

// StepCompleteOut is the result of step.complete: the recorded signal and
// whether the task moved on.
type StepCompleteOut struct {
	Artifact *kanban.Artifact `json:"artifact"`
	Task     *kanban.Task     `json:"task"`
	Advanced bool             `json:"advanced"`
	// FromStepID is the step that was completed; ToStepID the step the
	// task moved to (when advanced).
	FromStepID string `json:"from_step_id"`
	ToStepID   string `json:"to_step_id,omitempty"`
	// Outcome says in words what happened, for the agent.
	Outcome string `json:"outcome"`
}

// completeStep records that the session finished its task's current step
// and, when that step auto-advances, moves the task to the next step by
// position. A full next step (wip_limit) or a last step leaves the task
// where it is; the signal is recorded either way.
func (s *Service) completeStep(ctx context.Context, p Principal, in StepCompleteIn) (*StepCompleteOut, error) {
	t, err := s.store.GetTask(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	step, err := s.store.GetStep(ctx, t.WorkflowStepID)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(stepCompleteData{StepID: step.ID, Summary: in.Summary, Handoff: in.Handoff, Blockers: in.Blockers})
	if err != nil {
		return nil, fmt.Errorf("step complete: %w", err)
	}
	a, err := s.store.CreateArtifact(ctx, kanban.Artifact{TaskID: t.ID, SessionID: p.SessionID, Kind: kanban.ArtifactStepComplete, Data: data})
	if err != nil {
		return nil, err
	}
	kanban.EventArtifactCreated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), a)
	out := &StepCompleteOut{Artifact: a, Task: t, FromStepID: step.ID}
	if !step.AutoAdvance {
		out.Outcome = "recorded; the step does not auto-advance, so the task stays on it"
		return out, nil
	}
	if step.AutoAdvanceRequiresSignal && s.managed && s.isManaged(ctx, p.SessionID) {
		out.Outcome = "recorded; the task moves to the next step when this turn ends"
		return out, nil
	}
	next, err := s.nextStep(ctx, step)
	if err != nil {
		return nil, err
	}
	if next == nil {
		out.Outcome = "recorded; this is the workflow's last step, so the task stays on it"
		return out, nil
	}
	moved, queued, err := s.FlowMove(ctx, t.ID, next.ID)
	if err != nil {
		return nil, err
	}
	out.Task = moved
	if queued {
		out.Outcome = "recorded; the next step is full (wip_limit): the task waits in its admission queue and moves when there is room"
		return out, nil
	}
	s.events.Emit(kanban.TaskMoved{Task: moved, FromStepID: step.ID})
	out.Advanced, out.ToStepID = true, next.ID
	out.Outcome = "recorded; the task moved to the next step"
	return out, nil
}

// isManaged reports whether a session's agent is run by the runtime (its
// turns end, so turn-end transitions apply to it).
func (s *Service) isManaged(ctx context.Context, sessionID string) bool {
	sess, err := s.store.GetSession(ctx, sessionID)
	return err == nil && sess.Managed
}

// nextStep returns the step after cur by position, or nil for the last.
func (s *Service) nextStep(ctx context.Context, cur *kanban.WorkflowStep) (*kanban.WorkflowStep, error) {
	pg := kanban.Page{Limit: stepsPageLimit}
	var best *kanban.WorkflowStep
	for {
		l, err := s.store.ListSteps(ctx, cur.WorkflowID, pg)
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			st := &l.Items[i]
			if st.Position > cur.Position && (best == nil || st.Position < best.Position) {
				best = st
			}
		}
		if l.NextCursor == "" {
			return best, nil
		}
		pg.Cursor = l.NextCursor
	}
}

// Step decisions.
const (
	decisionForbidden = "a session may only record decisions on its own task and its subtasks"
)

// StepDecideIn is the payload of step.decide.
type StepDecideIn struct {
	TaskID   string `json:"task_id,omitzero"`
	Decision string `json:"decision,omitzero"`
	Reason   string `json:"reason,omitzero"`
}

// stepDecisionData is what a step_decision artifact records.
type stepDecisionData struct {
	StepID   string `json:"step_id"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	// Participant is who decided, as a step participant key: "operator"
	// or the deciding session's agent profile id.
	Participant string `json:"participant,omitempty"`
}

// StepDecideOut is the result of step.decide.
type StepDecideOut struct {
	Artifact *kanban.Artifact `json:"artifact"`
	// Supersedes is the id of the decision this one replaces as the
	// latest on the task, if any.
	Supersedes string `json:"supersedes,omitempty"`
	// Quorum is what the decision did to the step's quorum.
	Quorum *QuorumOut `json:"quorum"`
}

// decideStep records an approval or rejection of a task's current step.
// The latest decision on a task is the one in force.
func (s *Service) decideStep(ctx context.Context, p Principal, in StepDecideIn) (*StepDecideOut, error) {
	t, err := s.taskInTree(ctx, p, in.TaskID, reachDescendants, decisionForbidden)
	if err != nil {
		return nil, err
	}
	out := &StepDecideOut{}
	prev, err := s.store.LatestArtifact(ctx, t.ID, kanban.ArtifactDecision)
	switch {
	case err == nil:
		out.Supersedes = prev.ID
	case kanban.ErrorCode(err) != kanban.CodeNotFound:
		return nil, err
	}
	key := kanban.ParticipantOperator
	if p.Kind == Session {
		if key, err = s.deciderKey(ctx, p.SessionID); err != nil {
			return nil, err
		}
	}
	data, err := json.Marshal(stepDecisionData{StepID: t.WorkflowStepID, Decision: in.Decision, Reason: in.Reason, Participant: key})
	if err != nil {
		return nil, fmt.Errorf("step decide: %w", err)
	}
	a := kanban.Artifact{TaskID: t.ID, Kind: kanban.ArtifactDecision, Data: data}
	if p.Kind == Session {
		a.SessionID = p.SessionID
	}
	if out.Artifact, err = s.store.CreateArtifact(ctx, a); err != nil {
		return nil, err
	}
	kanban.EventArtifactCreated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), out.Artifact)
	if out.Quorum, err = s.resolveQuorum(ctx, t.ID, t.WorkflowStepID, key); err != nil {
		return nil, err
	}
	return out, nil
}

// deciderKey is the participant key of a deciding session: its agent
// profile id ("" when it has none: then it is no participant).
func (s *Service) deciderKey(ctx context.Context, sessionID string) (string, error) {
	sess, err := s.store.GetSession(ctx, sessionID)
	if err != nil {
		return "", err
	}
	return sess.AgentProfileID, nil
}
