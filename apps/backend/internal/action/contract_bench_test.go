package action

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// contractCases are the payloads of make bench's validation section,
// checked by their action's contract as a WebSocket or CLI call is.
var contractCases = []struct {
	name   string
	action kanban.Action
	raw    string
	valid  bool
}{
	{"create_task_16_fields", kanban.ActionTaskCreate, `{"title":"Fix the flaky store test","prompt":"Investigate the flaky ` +
		`TestCreateTaskConcurrentPositions and fix its cause; add a regression test.","parent_id":"self","workspace_id":"ws_0123456789",` +
		`"workflow_id":"wf_0123456789","workflow_step_id":"st_0123456789","agent_profile_id":"ap_claude_default",` +
		`"executor_profile_id":"ep_worktree_default","start_agent":true,"repository_id":"repo_0123456789",` +
		`"local_path":"/home/dev/src/kandev","repository_url":"https://github.com/kandev/kandev.git","base_branch":"main",` +
		`"external_id":"ci-run-48213","blocked_by":["t_0000000001","t_0000000002"],"start_when_unblocked":true}`, true},
	{"list_tasks_6_fields", kanban.ActionTaskList, `{"workflow_id":"wf_0123456789","workflow_step_id":"st_0123456789",` +
		`"state":"IN_PROGRESS","include_archived":false,"limit":50,"cursor":"WzEyLCJ0XzAwMDAwMDAwMDEiXQ"}`, true},
	{"create_task_refused_5", kanban.ActionTaskCreate, `{"title":"This title is far too long for the board because it keeps ` +
		`going on and on","start_agent":"yes","blocked_by":[42],"workspace_id":"not an id!","priority":"high"}`, false},
}

// BenchmarkContractCheck is an action's contract check on the payload as
// it arrives (raw JSON): decode, aliases, validate, encode — and for a
// refusal, the VALIDATION_ERROR's text.
func BenchmarkContractCheck(b *testing.B) {
	for _, c := range contractCases {
		contract := ContractOf(c.action)
		raw := json.RawMessage(c.raw)
		if _, err := contract.Check(raw); (err == nil) != c.valid {
			b.Fatalf("%s: got %v, want valid %v", c.name, err, c.valid)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := contract.Check(raw); err != nil {
					_ = err.Error()
				}
			}
		})
	}
}

// BenchmarkCallerTaskList5 is list_tasks_kandev's action called in process
// (the external /mcp endpoint's backend) with a 5-task page: its
// arguments as a forwarding tool hands them on (Checked: not checked
// again), and as raw JSON (checked by the contract).
func BenchmarkCallerTaskList5(b *testing.B) {
	reg := benchRegistry(b)
	ctx := context.Background()
	for range 10 {
		if _, err := reg.Dispatch(ctx, Principal{Kind: Operator}, kanban.ActionTaskCreate, json.RawMessage(`{"title":"Listed task","start_agent":false}`)); err != nil {
			b.Fatal(err)
		}
	}
	caller := Caller{Registry: reg, Principal: Principal{Kind: Operator}}
	raw := `{"limit":5}`
	for name, payload := range map[string]any{"checked": Checked(raw), "raw": json.RawMessage(raw)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var out json.RawMessage
			for b.Loop() {
				if err := caller.Call(ctx, kanban.ActionTaskList, payload, &out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
