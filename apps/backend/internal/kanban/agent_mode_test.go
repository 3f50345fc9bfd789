package kanban

import (
	"encoding/json"
	"testing"
)

func TestStepPromptWith(t *testing.T) {
	for _, tc := range []struct {
		step, want string
		combined   bool
	}{
		{"Plan: {{task_prompt}} (a plan only; {{task_prompt}} stays)", "Plan: Fix it (a plan only; {{task_prompt}} stays)", true},
		{"{{task_prompt}}", "Fix it", true},
		{"Review the work.", "Review the work.", false},
		{"{{ task_prompt }}", "{{ task_prompt }}", false},
	} {
		got, combined := StepPromptWith(tc.step, "Fix it")
		if got != tc.want || combined != tc.combined {
			t.Fatalf("%q: got %q %v, want %q %v", tc.step, got, combined, tc.want, tc.combined)
		}
	}
}

// TestEntryModes: a step's on_enter mode automations, in order, later
// ones winning; other automations do not count.
func TestEntryModes(t *testing.T) {
	var step WorkflowStep
	if err := json.Unmarshal([]byte(`{"events":{"on_enter":[{"type":"enable_plan_mode"},{"type":"set_session_mode","config":{"mode":"a"}},
		{"type":"start_agent"},{"type":"set_session_mode","config":{"mode":"b"}},{"type":"reset_agent_context"}],
		"on_exit":[{"type":"disable_plan_mode"}]}}`), &step); err != nil {
		t.Fatal(err)
	}
	u, ok := step.EntryModes()
	if !ok || u.PlanMode == nil || !*u.PlanMode || u.SessionMode == nil || *u.SessionMode != "b" || u.ResetSessionID != nil {
		t.Fatalf("entry modes %+v %v", u, ok)
	}
	if got := (AgentMode{TaskID: "t"}).Apply(u); got != (AgentMode{TaskID: "t", PlanMode: true, SessionMode: "b"}) {
		t.Fatalf("applied %+v", got)
	}
	var plain WorkflowStep
	if _, ok := plain.EntryModes(); ok {
		t.Fatal("a step without mode automations has entry modes")
	}
}
