package action

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// canary is appended to every caller-chosen key (one no payload type
// declares) and, optionally, to every string value; no error message may
// contain it.
const canary = "ZQXcanary"

// maxErrorBytes bounds a refusal's message.
const maxErrorBytes = 1024

// FuzzParseWorkflowDocument checks the workflow importer on JSON and YAML
// text: no panic, refusals safe and bounded, and every accepted workflow
// survives an export and a second import unchanged.
func FuzzParseWorkflowDocument(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"type":"kandev_workflow","workflows":[{"name":"W","steps":[{"name":"A","position":0,"color":"","events":{},"is_start_step":true},{"name":"B","position":1,"color":"","events":{},"wip_limit":2,"pull_from_step_position":0}]}]}`,
		`{"version":1,"type":"kandev_workflow","workflows":[{"name":"W","steps":[{"name":"A","position":3,"color":"","events":{"on_enter":[{"type":"start_agent"}],"on_turn_complete":[{"type":"move_to_step","config":{"step_position":7}}]}},{"name":"B","position":7,"color":"","events":{}}]}]}`,
		"version: 1\ntype: kandev_workflow\nworkflows:\n  - name: W\n    steps:\n      - name: A\n        position: 0\n        color: red\n        events: {}\n",
		"a: &a [x, x]\nb: [*a, *a]\n", `{"version":2,"type":"kandev_workflow","workflows":[]}`, `[]`, `{}`, "",
	} {
		f.Add([]byte(s), false)
	}
	names := map[string]bool{}
	declaredNames(reflect.TypeFor[WorkflowDocument](), names, map[reflect.Type]bool{})
	f.Fuzz(func(t *testing.T, raw []byte, markValues bool) {
		raw = markPayload(raw, names, markValues)
		doc, parsed, err := parseWorkflowDocument(string(raw))
		if err != nil {
			checkRefusal(t, err)
			return
		}
		for i, pw := range parsed {
			if len(pw.steps) == 0 || len(pw.steps) > kanban.MaxWorkflowSteps || len(pw.steps) != len(doc.Workflows[i].Steps) {
				t.Fatalf("accepted %d steps (document %d)", len(pw.steps), len(doc.Workflows[i].Steps))
			}
			steps := storedSteps(pw.steps)
			again, err := json.Marshal(exportWorkflow(&pw.workflow, steps, func(string) *DocAgentProfile { return nil }))
			if err != nil {
				t.Fatalf("export: %v", err)
			}
			_, parsed2, err := parseWorkflowDocument(string(again))
			if err != nil {
				t.Fatalf("re-import of the export %q: %v", again, err)
			}
			if !reflect.DeepEqual(normalSteps(steps), normalSteps(storedSteps(parsed2[0].steps))) {
				t.Fatalf("round trip changed the steps:\n%+v\n%+v", steps, parsed2[0].steps)
			}
		}
	})
}

// storedSteps gives parsed steps ids and resolves their position
// references to those ids, as the store does when it writes them.
func storedSteps(steps []kanban.WorkflowStep) []kanban.WorkflowStep {
	out := append([]kanban.WorkflowStep(nil), steps...)
	id := func(pos int) string { return fmt.Sprintf("s%d", pos) }
	for i := range out {
		st := &out[i]
		st.ID = id(i)
		if st.PullFromPosition != nil {
			st.PullFromStepID, st.PullFromPosition = id(*st.PullFromPosition), nil
		}
		events := make(map[string][]kanban.StepAction, len(st.Events))
		for ev, actions := range st.Events {
			resolved := make([]kanban.StepAction, len(actions))
			for j, a := range actions {
				resolved[j] = a
				if pos, ok := a.ConfigInt("step_position"); ok && a.Type == kanban.AutoMoveToStep {
					resolved[j].Config = map[string]json.RawMessage{"step_id": json.RawMessage(strconv.Quote(id(pos)))}
				}
			}
			events[ev] = resolved
		}
		st.Events = events
	}
	return out
}

// normalSteps maps nil and empty event maps alike (export writes {}).
func normalSteps(steps []kanban.WorkflowStep) []kanban.WorkflowStep {
	out := append([]kanban.WorkflowStep(nil), steps...)
	for i := range out {
		if len(out[i].Events) == 0 {
			out[i].Events = nil
		}
	}
	return out
}

func checkRefusal(t *testing.T, err error) {
	t.Helper()
	kerr, ok := kanban.AsError(err)
	if !ok {
		t.Fatalf("got %T %v, want a *kanban.Error", err, err)
	}
	if kerr.Code != kanban.CodeBadRequest && kerr.Code != kanban.CodeValidation {
		t.Fatalf("got code %s, want BAD_REQUEST or VALIDATION_ERROR", kerr.Code)
	}
	msg := kerr.Error()
	if strings.Contains(msg, canary) || strings.Contains(kerr.Field, canary) {
		t.Fatalf("got %q (field %q), want no caller keys or values", msg, kerr.Field)
	}
	if len(msg) > maxErrorBytes {
		t.Fatalf("got %d bytes, want <= %d", len(msg), maxErrorBytes)
	}
}

// declaredNames collects the JSON names of t's fields, recursively.
func declaredNames(t reflect.Type, names map[string]bool, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for name, f := range structFields(t) {
		names[name] = true
		declaredNames(f.Type, names, seen)
	}
}

// markPayload appends the canary to undeclared keys (and string values)
// of a JSON payload; input that is not JSON is returned as it is.
func markPayload(raw []byte, names map[string]bool, markValues bool) []byte {
	var tree any
	if json.Unmarshal(raw, &tree) != nil {
		return raw
	}
	b, err := json.Marshal(mark(tree, names, markValues))
	if err != nil {
		return raw
	}
	return b
}

func mark(v any, names map[string]bool, markValues bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			if !names[k] {
				k += canary
			}
			out[k] = mark(c, names, markValues)
		}
		return out
	case []any:
		for i, c := range x {
			x[i] = mark(c, names, markValues)
		}
		return x
	case string:
		if markValues {
			return x + canary
		}
	}
	return v
}
