package kanban

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Participant roles on a step.
const (
	RoleReviewer = "reviewer"
	RoleApprover = "approver"
)

// ParticipantRoles lists the participant roles.
var ParticipantRoles = []string{RoleReviewer, RoleApprover}

// Quorum rules of a step's approval.
const (
	// QuorumAll: every participant approves; one rejection rejects.
	QuorumAll = "all"
	// QuorumAny: one approval approves; a rejection from every
	// participant rejects.
	QuorumAny = "any"
	// QuorumCount: Count approvals approve ("N of M"); once so many
	// rejected that Count approvals can no longer be reached, rejected.
	QuorumCount = "count"
)

// QuorumRules lists the quorum rules.
var QuorumRules = []string{QuorumAll, QuorumAny, QuorumCount}

// MaxStepParticipants bounds the participants of one step.
const MaxStepParticipants = 20

// ParticipantOperator is the participant key of the operator.
const ParticipantOperator = "operator"

// StepParticipant is one reviewer or approver of a step: an agent profile
// (woken by queue_run_for_each_participant, deciding through
// record_step_decision_kandev) or the operator (deciding on the board or
// over the WebSocket API with step.decide).
type StepParticipant struct {
	Role           string `json:"role"`
	AgentProfileID string `json:"agent_profile_id,omitempty"`
	Operator       bool   `json:"operator,omitempty"`
	// Instructions are the participant's role instructions, told to its
	// agent with every wake (at most MaxParticipantInstructionsLen).
	Instructions string `json:"instructions,omitempty"`
}

// MaxParticipantInstructionsLen bounds a participant's instructions.
const MaxParticipantInstructionsLen = 10_000

// Key identifies the participant among a step's: "operator" or the agent
// profile id.
func (p StepParticipant) Key() string {
	if p.Operator {
		return ParticipantOperator
	}
	return p.AgentProfileID
}

// StepApproval is a step's participants and the quorum of their decisions
// that moves a task on: approved → the next step; rejected → RejectStepID
// (default: the previous step), with the reasons sent to the task's
// primary agent as its next prompt.
type StepApproval struct {
	Participants []StepParticipant `json:"participants"`
	Quorum       string            `json:"quorum"`
	// Count is N of "N of M" (QuorumCount only).
	Count        int    `json:"count,omitempty"`
	RejectStepID string `json:"reject_step_id,omitempty"`
	// RejectStepPosition names RejectStepID by its 0-based position,
	// where steps have no ids yet (documents, workflow.create); it is
	// stored as RejectStepID.
	RejectStepPosition *int `json:"reject_step_position,omitempty"`
}

// Participant returns the step's participant with key (see
// StepParticipant.Key).
func (a *StepApproval) Participant(key string) (StepParticipant, bool) {
	if a == nil {
		return StepParticipant{}, false
	}
	i := slices.IndexFunc(a.Participants, func(p StepParticipant) bool { return p.Key() == key })
	if i < 0 {
		return StepParticipant{}, false
	}
	return a.Participants[i], true
}

// CheckApproval validates a step's approval: 1 to MaxStepParticipants
// distinct participants, each an agent profile or the operator with a
// known role, a known quorum, a Count within the participants for
// QuorumCount (and none otherwise). Messages name fields, never values.
func CheckApproval(field string, a *StepApproval) error {
	if a == nil {
		return nil
	}
	if len(a.Participants) == 0 || len(a.Participants) > MaxStepParticipants {
		return FieldError(field+".participants", "must list between 1 and %d participants", MaxStepParticipants)
	}
	seen := map[string]bool{}
	for i, p := range a.Participants {
		f := fmt.Sprintf("%s.participants[%d]", field, i)
		if !slices.Contains(ParticipantRoles, p.Role) {
			return FieldError(f+".role", "must be one of: %s", strings.Join(ParticipantRoles, ", "))
		}
		if p.Operator == (p.AgentProfileID != "") {
			return FieldError(f, "must be either an agent_profile_id or operator: true")
		}
		if !p.Operator && !ValidID(p.AgentProfileID) {
			return FieldError(f+".agent_profile_id", "must be an id")
		}
		if err := CheckText(f+".instructions", p.Instructions, false, MaxParticipantInstructionsLen); err != nil {
			return err
		}
		if seen[p.Key()] {
			return FieldError(f, "repeats another participant of the step")
		}
		seen[p.Key()] = true
	}
	if !slices.Contains(QuorumRules, a.Quorum) {
		return FieldError(field+".quorum", "must be one of: %s", strings.Join(QuorumRules, ", "))
	}
	switch {
	case a.Quorum == QuorumCount && (a.Count < 1 || a.Count > len(a.Participants)):
		return FieldError(field+".count", "must be from 1 to the number of participants for quorum count")
	case a.Quorum != QuorumCount && a.Count != 0:
		return FieldError(field+".count", "is only for quorum count")
	}
	if a.RejectStepID != "" && !ValidID(a.RejectStepID) {
		return FieldError(field+".reject_step_id", "must be an id")
	}
	if a.RejectStepID != "" && a.RejectStepPosition != nil {
		return FieldError(field, "give reject_step_id or reject_step_position, not both")
	}
	return nil
}

// Quorum outcomes.
const (
	QuorumPending  = ""
	QuorumApproved = DecisionApproved
	QuorumRejected = DecisionRejected
)

// Outcome applies the quorum to decisions (participant key → approved or
// rejected; keys of non-participants are ignored): approved, rejected or
// pending ("").
func (a *StepApproval) Outcome(decisions map[string]string) string {
	if a == nil || len(a.Participants) == 0 {
		return QuorumPending
	}
	m, approved, rejected := len(a.Participants), 0, 0
	for _, p := range a.Participants {
		switch decisions[p.Key()] {
		case DecisionApproved:
			approved++
		case DecisionRejected:
			rejected++
		}
	}
	need := m // QuorumAll
	switch a.Quorum {
	case QuorumAny:
		need = 1
	case QuorumCount:
		need = a.Count
	}
	switch {
	case approved >= need:
		return QuorumApproved
	case m-rejected < need: // the approvals needed can no longer come
		return QuorumRejected
	}
	return QuorumPending
}

// EncodeApproval is the stored form of a step's approval ("" for none).
func EncodeApproval(a *StepApproval) (string, error) {
	if a == nil {
		return "", nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("encode approval: %w", err)
	}
	return string(b), nil
}

// DecodeApproval reads a stored approval (nil for "").
func DecodeApproval(s string) (*StepApproval, error) {
	if s == "" {
		return nil, nil
	}
	var a StepApproval
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return nil, fmt.Errorf("decode approval: %w", err)
	}
	return &a, nil
}

// participantSessionPrefix starts the name of a participant's session.
const participantSessionPrefix = "office:"

// ParticipantSessionName is the name of the session a participant of
// role runs in on a task.
func ParticipantSessionName(role string) string { return participantSessionPrefix + role }

// IsParticipantSession reports whether a session's name marks it as a
// step participant's (not the task's primary agent's).
func IsParticipantSession(name string) bool { return strings.HasPrefix(name, participantSessionPrefix) }

// ApprovalInboxService finds what waits on the operator's decision.
type ApprovalInboxService interface {
	// OperatorApprovalSteps returns the steps of a workspace's workflows
	// whose approval lists the operator among its participants
	// (NOT_FOUND without the workspace).
	OperatorApprovalSteps(ctx context.Context, workspaceID string) ([]WorkflowStep, error)
	// ListTasksOnSteps returns a page of the live tasks on the steps, by
	// their arrival there (oldest first).
	ListTasksOnSteps(ctx context.Context, stepIDs []string, p Page) (*List[Task], error)
}
