package argcheck

import (
	"encoding/json"
	"testing"
)

const benchSchema = `{"type":"object","properties":{
  "title":{"type":"string","minLength":1,"maxLength":60},
  "prompt":{"type":"string","maxLength":100000},
  "parent_id":{"type":"string"},
  "workspace_id":{"type":"string"},
  "workflow_id":{"type":"string"},
  "workflow_step_id":{"type":"string"},
  "agent_profile_id":{"type":"string"},
  "executor_profile_id":{"type":"string"},
  "start_agent":{"type":"boolean"},
  "base_branch":{"type":"string","pattern":"^[A-Za-z0-9._/-]+$"},
  "priority":{"type":"string","enum":["low","medium","high"]},
  "blocked_by":{"type":"array","items":{"type":"string"},"maxItems":50}
},"required":["title"],"additionalProperties":false}`

const benchArgs = `{"title":"Fix the flaky test","prompt":"Investigate and fix the flaky test in the store package.",
  "parent_id":"self","workspace_id":"ws-1","workflow_id":"wf-1","workflow_step_id":"st-1",
  "agent_profile_id":"ap-1","executor_profile_id":"ep-1","start_agent":true,"base_branch":"main",
  "priority":"high","blocked_by":["t-1","t-2"]}`

func benchSetup(b *testing.B) (*Validator, any) {
	b.Helper()
	v := mustCompile(b, "create_task_kandev", benchSchema)
	var args any
	if err := json.Unmarshal([]byte(benchArgs), &args); err != nil {
		b.Fatal(err)
	}
	if err := v.Validate(args); err != nil {
		b.Fatalf("bench args: got %v, want valid", err)
	}
	return v, args
}

// BenchmarkValidate is the wrapper's cost for valid arguments.
func BenchmarkValidate(b *testing.B) {
	v, args := benchSetup(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareValidate is jsonschema alone, to compare with BenchmarkValidate.
func BenchmarkBareValidate(b *testing.B) {
	v, args := benchSetup(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.schema.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateInvalid includes wording three problems.
func BenchmarkValidateInvalid(b *testing.B) {
	v, _ := benchSetup(b)
	var args any
	raw := `{"title":"","priority":"urgent","tittle":"x","blocked_by":[1]}`
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(args); err == nil {
			b.Fatal("got nil, want problems")
		} else {
			_ = err.Error()
		}
	}
}
