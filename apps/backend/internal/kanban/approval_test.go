package kanban

import "testing"

// TestQuorumOutcome: all, any and N of M over approvals and rejections.
func TestQuorumOutcome(t *testing.T) {
	t.Parallel()
	three := []StepParticipant{{Role: RoleReviewer, AgentProfileID: "a"}, {Role: RoleReviewer, AgentProfileID: "b"},
		{Role: RoleApprover, Operator: true}}
	y, n := DecisionApproved, DecisionRejected
	for _, c := range []struct {
		quorum string
		count  int
		d      map[string]string
		want   string
	}{
		{QuorumAll, 0, map[string]string{"a": y, "b": y}, QuorumPending},
		{QuorumAll, 0, map[string]string{"a": y, "b": y, "operator": y}, QuorumApproved},
		{QuorumAll, 0, map[string]string{"b": n}, QuorumRejected},
		{QuorumAny, 0, map[string]string{"a": n, "b": n}, QuorumPending},
		{QuorumAny, 0, map[string]string{"a": n, "operator": y}, QuorumApproved},
		{QuorumAny, 0, map[string]string{"a": n, "b": n, "operator": n}, QuorumRejected},
		{QuorumCount, 2, map[string]string{"a": y, "b": n}, QuorumPending},
		{QuorumCount, 2, map[string]string{"a": y, "operator": y}, QuorumApproved},
		{QuorumCount, 2, map[string]string{"a": n, "b": n}, QuorumRejected},
		{QuorumAll, 0, map[string]string{"stranger": n, "a": y}, QuorumPending},
	} {
		a := &StepApproval{Participants: three, Quorum: c.quorum, Count: c.count}
		if got := a.Outcome(c.d); got != c.want {
			t.Errorf("%s %d of %v: got %q, want %q", c.quorum, c.count, c.d, got, c.want)
		}
	}
}
