package action

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Office: waking agents (queue_run), forgetting decisions
// (clear_decisions) and the quorum of a step's participants.

// Wake names the agent a queue_run wakes on a task: its primary agent
// (Participant nil) or one of its step's participants.
type Wake struct {
	Participant *kanban.StepParticipant
	Reason      string
}

// WakeAgent wakes an agent on a task with a reason: a live session of it
// gets the reason as its next turn; without one, a session is started
// with it as its first message. The primary agent runs with the task's
// launch profiles; a participant with its profile, in office mode (it has
// record_step_decision_kandev), in a session named for its role. It
// returns the session woken.
func (s *Service) WakeAgent(ctx context.Context, taskID string, w Wake) (*kanban.Session, error) {
	t, err := s.store.GetTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	text := w.Reason
	if w.Participant != nil && w.Participant.Instructions != "" {
		text += "\n\n" + w.Participant.Instructions
	}
	live, err := s.wakeTarget(ctx, t.ID, w.Participant)
	if err != nil {
		return nil, err
	}
	if live != nil {
		m, err := s.store.AppendMessage(ctx, kanban.Message{SessionID: live.ID, Author: "workflow", Type: "prompt", Content: text})
		if err != nil {
			return nil, err
		}
		s.publishMessage(m, t.WorkspaceID, kanban.DeliveryQueued)
		s.agents.Deliver(live.ID, false)
		return live, nil
	}
	agent, mode, name := "", kanban.Mode(""), ""
	if w.Participant != nil {
		agent, mode, name = w.Participant.AgentProfileID, kanban.ModeOffice, kanban.ParticipantSessionName(w.Participant.Role)
	}
	agent, executor, err := s.launchProfiles(ctx, t, agent, "")
	if err != nil {
		return nil, err
	}
	if err := s.checkProfiles(ctx, t.WorkspaceID, agent, executor); err != nil {
		return nil, err
	}
	sc := s.firstSession(t.Title, launchText(t), agent, executor)
	sc.TaskID, sc.Name, sc.Mode = t.ID, name, mode
	sc.FirstMessage.Author, sc.FirstMessage.Content = "workflow", text
	sess, _, err := s.store.CreateSession(ctx, sc)
	if err != nil {
		return nil, err
	}
	kanban.EventSessionCreated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), sess)
	s.agents.Start(sess)
	return sess, nil
}

// wakeTarget finds the live session a wake goes to (nil: none is live).
func (s *Service) wakeTarget(ctx context.Context, taskID string, p *kanban.StepParticipant) (*kanban.Session, error) {
	if p == nil {
		live, err := s.liveSession(ctx, taskID, "")
		if kanban.ErrorCode(err) == kanban.CodeConflict {
			return nil, nil
		}
		return live, err
	}
	var found *kanban.Session
	name := kanban.ParticipantSessionName(p.Role)
	err := s.eachSession(ctx, taskID, func(sess *kanban.Session) bool {
		if !sess.State.Ended() && sess.Name == name && sess.AgentProfileID == p.AgentProfileID {
			found = sess
			return false
		}
		return true
	})
	return found, err
}

// ClearDecisions forgets the task's step decisions recorded before
// before and says how many there were. The flow engine passes the time
// of the event whose clear_decisions runs, so a decision made while the
// event waited (an operator deciding as the card lands) is kept.
func (s *Service) ClearDecisions(ctx context.Context, taskID string, before time.Time) (int, error) {
	t, err := s.store.GetTask(ctx, taskID)
	if err != nil {
		return 0, err
	}
	n, err := s.store.DeleteArtifacts(ctx, t.ID, kanban.ArtifactDecision, before)
	if err != nil {
		return 0, err
	}
	// A new round of decisions on this visit may reach the quorum again.
	if err := s.store.ReleaseQuorum(ctx, t.ID, t.StepEnteredAt); err != nil {
		return 0, err
	}
	if n > 0 {
		kanban.EventArtifactDeleted.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID),
			kanban.DeletedArtifacts{Deleted: n, Kind: kanban.ArtifactDecision, TaskID: t.ID})
	}
	return n, nil
}

// maxDecisionPages bounds the pages of decisions a quorum reads.
const maxDecisionPages = 20

// stepDecisions returns the decisions in force on a task's visit of a
// step: per participant key, the latest recorded since the task entered
// the step, with its reason.
func (s *Service) stepDecisions(ctx context.Context, t *kanban.Task, stepID string) (map[string]stepDecisionData, error) {
	out := map[string]stepDecisionData{}
	pg := kanban.Page{Limit: kanban.MaxLimit}
	for range maxDecisionPages {
		l, err := s.store.ListArtifacts(ctx, t.ID, kanban.ArtifactDecision, pg)
		if err != nil {
			return nil, err
		}
		for _, a := range l.Items { // newest first
			if a.CreatedAt.Before(t.StepEnteredAt) {
				return out, nil
			}
			var d stepDecisionData
			if json.Unmarshal(a.Data, &d) != nil || d.StepID != stepID || d.Participant == "" {
				continue
			}
			if _, seen := out[d.Participant]; !seen {
				out[d.Participant] = d
			}
		}
		if l.NextCursor == "" {
			break
		}
		pg.Cursor = l.NextCursor
	}
	return out, nil
}

// QuorumOut says what a decision did to its step's quorum.
type QuorumOut struct {
	// Counted: the decider is a participant of the step.
	Counted bool `json:"counted"`
	// Outcome is approved or rejected once the quorum is reached, else
	// absent.
	Outcome string `json:"outcome,omitempty"`
	// ToStepID is where the task moved when the quorum was reached.
	ToStepID string `json:"to_step_id,omitempty"`
}

// resolveQuorum counts a decision of participant key on the task's step
// and, once the step's quorum is reached, moves the task: approved, to
// the next step; rejected, to the approval's reject step (default the
// previous one), with the rejections' reasons sent to the task's primary
// agent first. It runs under s.quorum, and a reached quorum is claimed
// in the store (once per visit of the step), so two decisions reaching
// it at once, on this backend or on two, move the task once.
func (s *Service) resolveQuorum(ctx context.Context, taskID, stepID, key string) (*QuorumOut, error) {
	s.quorum.Lock()
	defer s.quorum.Unlock()
	t, err := s.store.GetTask(ctx, taskID)
	if err != nil || t.WorkflowStepID != stepID {
		return &QuorumOut{}, err
	}
	step, err := s.store.GetStep(ctx, stepID)
	if err != nil {
		return nil, err
	}
	if _, ok := step.Approval.Participant(key); !ok {
		return &QuorumOut{}, nil
	}
	out := &QuorumOut{Counted: true}
	decisions, err := s.stepDecisions(ctx, t, step.ID)
	if err != nil {
		return nil, err
	}
	verdicts := make(map[string]string, len(decisions))
	for k, d := range decisions {
		verdicts[k] = d.Decision
	}
	if out.Outcome = step.Approval.Outcome(verdicts); out.Outcome == kanban.QuorumPending {
		return out, nil
	}
	if s.quorumReached != nil {
		s.quorumReached()
	}
	if won, err := s.store.ClaimQuorum(ctx, t.ID, step.ID, t.StepEnteredAt); err != nil || !won {
		return out, err // resolved by the other decision
	}
	if err := s.quorumMove(ctx, t, step, decisions, out); err != nil {
		// Unresolved after all: the next decision tries again.
		if rerr := s.store.ReleaseQuorum(context.WithoutCancel(ctx), t.ID, t.StepEnteredAt); rerr != nil {
			s.log.Warn("office: release a quorum claim", "task", t.ID, "err", rerr)
		}
		return nil, err
	}
	return out, nil
}

// quorumMove moves a task whose step's quorum was reached (claimed) to
// where outcome sends it, the rejections' reasons sent to its primary
// agent first, and fires on_approval_resolved.
func (s *Service) quorumMove(ctx context.Context, t *kanban.Task, step *kanban.WorkflowStep, decisions map[string]stepDecisionData, out *QuorumOut) error {
	target, err := s.quorumTarget(ctx, step, out.Outcome)
	if err != nil {
		return err
	}
	if target == nil { // the workflow's first or last step: nowhere to go
		s.Record(ctx, t.ID, "status", fmt.Sprintf("The quorum of %s was reached (%s); there is no step to move the task to.", step.Name, out.Outcome))
		s.events.Emit(kanban.ApprovalResolved{TaskID: t.ID, StepID: step.ID, Outcome: out.Outcome})
		return nil
	}
	if out.Outcome == kanban.QuorumRejected {
		if _, err := s.WakeAgent(ctx, t.ID, Wake{Reason: rejectionText(step, decisions)}); err != nil {
			return err
		}
	}
	moved, queued, err := s.FlowMove(ctx, t.ID, target.ID)
	if err != nil {
		return err
	}
	s.Record(ctx, t.ID, "status", fmt.Sprintf("The quorum of %s was reached (%s): the task moves to %s.", step.Name, out.Outcome, target.Name))
	out.ToStepID = target.ID
	if !queued {
		s.events.Emit(kanban.TaskMoved{Task: moved, FromStepID: step.ID})
	}
	s.events.Emit(kanban.ApprovalResolved{TaskID: t.ID, StepID: step.ID, Outcome: out.Outcome})
	return nil
}

// quorumTarget is where a reached quorum sends a task (nil: nowhere).
func (s *Service) quorumTarget(ctx context.Context, step *kanban.WorkflowStep, outcome string) (*kanban.WorkflowStep, error) {
	if outcome == kanban.QuorumApproved {
		return s.nextStep(ctx, step)
	}
	if id := step.Approval.RejectStepID; id != "" {
		return s.store.GetStep(ctx, id)
	}
	return s.Neighbour(ctx, step, -1)
}

// rejectionText tells the primary agent why its work came back.
func rejectionText(step *kanban.WorkflowStep, decisions map[string]stepDecisionData) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your work was rejected in %s. The reasons:\n", step.Name)
	for _, p := range step.Approval.Participants {
		if d, ok := decisions[p.Key()]; ok && d.Decision == kanban.DecisionRejected {
			fmt.Fprintf(&b, "\n- %s: %s", p.Role, d.Reason)
		}
	}
	b.WriteString("\n\nAddress them, then finish your turn.")
	return b.String()
}
