package argcheck

import (
	"encoding/json"
	"errors"
	"strings"
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

// rejectSchema is a copy of create_task_kandev's advertised input schema
// (descriptions left out; they take no part in validation or messages), the
// schema internal/bench measures its rejected call against.
const rejectSchema = `{"type":"object","properties":{
  "agent_profile_id":{"pattern":"^[A-Za-z0-9_-]{1,64}$","type":"string"},
  "base_branch":{"maxLength":255,"minLength":1,"type":"string"},
  "blocked_by":{"items":{"pattern":"^[A-Za-z0-9_-]{1,64}$","type":"string"},"maxItems":50,"type":"array","uniqueItems":true},
  "executor_profile_id":{"pattern":"^[A-Za-z0-9_-]{1,64}$","type":"string"},
  "external_id":{"maxLength":200,"minLength":1,"type":"string"},
  "local_path":{"maxLength":4096,"minLength":1,"type":"string"},
  "parent_id":{"pattern":"^[A-Za-z0-9_-]{1,64}$","type":"string"},
  "prompt":{"maxLength":100000,"type":"string"},
  "repository_id":{"pattern":"^[A-Za-z0-9_-]{1,64}$","type":"string"},
  "repository_url":{"maxLength":2048,"minLength":1,"type":"string"},
  "start_agent":{"default":true,"type":"boolean"},
  "start_when_unblocked":{"default":false,"type":"boolean"},
  "title":{"maxLength":60,"minLength":1,"type":"string"},
  "workflow_id":{"pattern":"^[A-Za-z0-9_-]{1,64}$","type":"string"},
  "workflow_step_id":{"pattern":"^[A-Za-z0-9_-]{1,64}$","type":"string"},
  "workspace_id":{"pattern":"^[A-Za-z0-9_-]{1,64}$","type":"string"}
},"required":["title"],"additionalProperties":false}`

// rejectArgs is internal/bench's "create_task, rejected (5 problems)"
// fixture: title too long, start_agent wrong type, blocked_by item wrong
// type, workspace_id off pattern, one unknown field.
const rejectArgs = `{"title":"This title is far too long for the board because it keeps going on and on",
  "start_agent":"yes","blocked_by":[42],"workspace_id":"not an id!","priority":"high"}`

// rejectSetup compiles rejectSchema and decodes rejectArgs the way the
// wrapper does (json.Number), checking that all five problems are reported.
func rejectSetup(b *testing.B) (*Validator, any) {
	b.Helper()
	v := mustCompile(b, "create_task_kandev", rejectSchema)
	dec := json.NewDecoder(strings.NewReader(rejectArgs))
	dec.UseNumber()
	var args any
	if err := dec.Decode(&args); err != nil {
		b.Fatal(err)
	}
	var p *Problems
	if err := v.Validate(args); !errors.As(err, &p) || len(p.List) != 5 {
		b.Fatalf("reject args: got %v, want 5 problems", err)
	}
	return v, args
}

// BenchmarkValidateRejected5 is the wrapper's cost for a call with five
// problems, message rendered, as internal/bench measures it.
func BenchmarkValidateRejected5(b *testing.B) {
	v, args := rejectSetup(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(args); err == nil {
			b.Fatal("got nil, want problems")
		} else {
			_ = err.Error()
		}
	}
}

// BenchmarkBareValidateRejected5 is jsonschema alone on the same call, to
// compare with BenchmarkValidateRejected5.
func BenchmarkBareValidateRejected5(b *testing.B) {
	v, args := rejectSetup(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.schema.Validate(args); err == nil {
			b.Fatal("got nil, want an error")
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
