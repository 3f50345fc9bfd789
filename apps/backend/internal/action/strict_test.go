package action

import (
	"encoding/json"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Embedded structs decode like encoding/json (their fields are the outer
// struct's) and stay strict: unknown keys and wrong types are refused.
func TestDecodeStrictEmbedded(t *testing.T) {
	var in StepCreateIn
	if err := DecodeStrict(json.RawMessage(`{"workflow_id":"w","name":"Todo","wip_limit":3.0}`), &in); err != nil {
		t.Fatalf("got %v, want the embedded fields accepted", err)
	}
	if in.WorkflowID != "w" || in.Name != "Todo" || in.WIPLimit != 3 {
		t.Fatalf("got %+v, want workflow w, name Todo, wip 3", in)
	}
	for raw, want := range map[string]string{
		`{"workflow_id":"w","StepSpec":{}}`: "payload: unknown field; allowed: allow_manual_move, auto_advance, auto_advance_requires_signal, auto_archive_after_hours, cancel_triggers_turn_complete, color, events, is_start_step, name, position, prompt, pull_from_step_id, pull_from_step_position, show_in_command_panel, wip_limit, workflow_id",
		`{"name":5}`:                        "payload.name: expected string",
	} {
		err := DecodeStrict(json.RawMessage(raw), &StepCreateIn{})
		if ke, ok := kanban.AsError(err); !ok || ke.Message != want {
			t.Errorf("%s: got %v, want %q", raw, err, want)
		}
	}
}
