package agent

import (
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestSessionModesWant: which ACP mode a task's agent mode asks of an
// agent, and which notes are made (once each) for what it cannot do.
func TestSessionModesWant(t *testing.T) {
	offered := &acp.SessionModeState{CurrentModeId: "default", AvailableModes: []acp.SessionMode{
		{Id: "default", Name: "Default"}, {Id: "acceptEdits", Name: "Accept edits"}, {Id: "plan", Name: "Plan"}}}
	noPlan := &acp.SessionModeState{CurrentModeId: "auto", AvailableModes: []acp.SessionMode{{Id: "read-only"}, {Id: "auto"}}}
	type step struct {
		mode  kanban.AgentMode
		want  acp.SessionModeId
		notes []string // substrings, in order
	}
	cases := []struct {
		name  string
		state *acp.SessionModeState
		steps []step
	}{
		{"plan mode and back", offered, []step{
			{kanban.AgentMode{}, "", nil},
			{kanban.AgentMode{PlanMode: true}, "plan", nil},
			{kanban.AgentMode{}, "default", nil},
		}},
		{"session mode, then plan over it, then the session mode again", offered, []step{
			{kanban.AgentMode{SessionMode: "acceptEdits"}, "acceptEdits", nil},
			{kanban.AgentMode{SessionMode: "acceptEdits", PlanMode: true}, "plan", nil},
			{kanban.AgentMode{SessionMode: "acceptEdits"}, "acceptEdits", nil},
		}},
		{"a mode not offered is noted once; a switched agent goes back", offered, []step{
			{kanban.AgentMode{PlanMode: true}, "plan", nil},
			{kanban.AgentMode{SessionMode: "yolo"}, "default", []string{"does not offer ACP session mode yolo (it offers: default, acceptEdits, plan)"}},
			{kanban.AgentMode{SessionMode: "yolo"}, "", nil},
		}},
		{"no plan mode offered: the instructions only, noted once per plan period", noPlan, []step{
			{kanban.AgentMode{PlanMode: true}, "", []string{"offers no ACP plan mode (it offers: read-only, auto)"}},
			{kanban.AgentMode{PlanMode: true}, "", nil},
			{kanban.AgentMode{}, "", nil},
			{kanban.AgentMode{PlanMode: true}, "", []string{"offers no ACP plan mode"}},
		}},
		{"no modes at all", nil, []step{
			{kanban.AgentMode{PlanMode: true, SessionMode: "plan"}, "", []string{"offers no ACP session modes, so plan mode works", "cannot switch to session mode plan"}},
			{kanban.AgentMode{PlanMode: true, SessionMode: "plan"}, "", nil},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSessionModes(tc.state)
			for i, st := range tc.steps {
				got, notes := s.want(&st.mode)
				if got != st.want {
					t.Fatalf("step %d: got mode %q, want %q", i, got, st.want)
				}
				if len(notes) != len(st.notes) {
					t.Fatalf("step %d: got notes %q, want %d", i, notes, len(st.notes))
				}
				for j := range notes {
					if !strings.Contains(notes[j], st.notes[j]) {
						t.Fatalf("step %d: got note %q, want it to contain %q", i, notes[j], st.notes[j])
					}
				}
				if got != "" { // what applyMode records after a switch
					s.current, s.forced = got, got != s.base
				}
			}
		})
	}
}
