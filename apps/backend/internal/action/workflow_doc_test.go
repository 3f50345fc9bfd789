package action

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// richSteps is a step list exercising every step setting.
func richSteps() []map[string]any {
	return []map[string]any{
		{"name": "Plan", "color": "#111111", "prompt": "Write a plan", "wip_limit": 2, "auto_advance": true,
			"events": map[string]any{"on_enter": []any{map[string]any{"type": "send_prompt", "config": map[string]any{"prompt": "Go"}}}}},
		{"name": "Build", "color": "#222222", "is_start_step": true, "allow_manual_move": false, "auto_archive_after_hours": 24, "heartbeat_minutes": 45,
			"auto_advance_requires_signal": true, "cancel_triggers_turn_complete": true, "show_in_command_panel": true,
			"pull_from_step_position": 0,
			"events":                  map[string]any{"on_turn_complete": []any{map[string]any{"type": "move_to_step", "config": map[string]any{"step_position": 2}}}}},
		{"name": "Ship", "events": map[string]any{"on_exit": []any{map[string]any{"type": "archive"}}, "on_turn_complete": []any{}}},
	}
}

// importDoc imports document text into workspace ws.
func importDoc(h *harness, ws, text string) WorkflowImportOut {
	h.t.Helper()
	return call[WorkflowImportOut](h, operator, kanban.ActionWorkflowImport, WorkflowImportIn{WorkspaceID: ws, Document: text})
}

// exportDoc exports a workflow and returns the document's JSON text.
func exportDoc(h *harness, id string) string {
	h.t.Helper()
	raw, err := h.do(operator, kanban.ActionWorkflowExport, WorkflowRefIn{WorkflowID: id})
	if err != nil {
		h.t.Fatalf("export: %v", err)
	}
	return string(raw)
}

// TestWorkflowDocumentOwnRoundTrip: Kandev's own workflow, with every step
// setting (its own auto_advance included), exports, imports elsewhere and
// exports to the same bytes.
func TestWorkflowDocumentOwnRoundTrip(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	created := call[WorkflowOut](h, operator, kanban.ActionWorkflowCreate, map[string]any{"name": "Release", "description": "ship it", "steps": richSteps()})
	first := exportDoc(h, created.Workflow.ID)
	other, _, _ := h.otherBoard()
	got := importDoc(h, other.ID, first)
	if len(got.Created) != 1 || len(got.Skipped) != 0 || len(got.Workflows) != 1 || len(got.Workflows[0].Steps) != 3 {
		t.Fatalf("import: got %+v, want Release created with 3 steps", got)
	}
	steps := got.Workflows[0].Steps
	if steps[1].PullFromStepID != steps[0].ID || steps[1].Events["on_turn_complete"][0].ConfigString("step_id") != steps[2].ID ||
		!steps[0].AutoAdvance || steps[1].AllowManualMove || !steps[1].IsStartStep || steps[1].HeartbeatMinutes != 45 {
		t.Fatalf("imported steps: got %+v, want references resolved to the new steps and every setting kept", steps)
	}
	if second := exportDoc(h, got.Workflows[0].Workflow.ID); second != first {
		t.Errorf("export after import:\n got %s\nwant %s", second, first)
	}
	// The same document again: skipped by name, nothing written.
	before := h.count("workflows")
	again := importDoc(h, other.ID, first)
	if len(again.Created) != 0 || !reflect.DeepEqual(again.Skipped, []string{"Release"}) || h.count("workflows") != before {
		t.Errorf("second import: got %+v, want Release skipped", again)
	}
}

// TestWorkflowDocumentReferenceRoundTrip: documents written in the
// reference product's format (JSON and YAML, every step setting, events,
// agent profiles, several workflows) import, export and re-import
// identically.
func TestWorkflowDocumentReferenceRoundTrip(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"kanban.json", "two-workflows.yml", "plan-and-build.yml"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			text, err := os.ReadFile("testdata/workflows/" + name)
			if err != nil {
				t.Fatal(err)
			}
			other, _, _ := h.otherBoard()
			got := importDoc(h, other.ID, string(text))
			if len(got.Warnings) != 0 || len(got.Skipped) != 0 {
				t.Fatalf("import: got %+v, want everything created without warnings", got)
			}
			want := docValue(t, string(text))
			for i, w := range got.Workflows {
				exported := exportDoc(h, w.Workflow.ID)
				if g, w := docValue(t, exported)["workflows"].([]any)[0], want["workflows"].([]any)[i]; !reflect.DeepEqual(g, w) {
					t.Errorf("workflow %d: export differs from the document\n got %v\nwant %v", i, g, w)
				}
				// Re-import the export into a third workspace: the same again.
				third, _, _ := h.otherBoard()
				re := importDoc(h, third.ID, exported)
				if exportDoc(h, re.Workflows[0].Workflow.ID) != exported {
					t.Errorf("workflow %d: re-import changed the document", i)
				}
			}
		})
	}
}

// docValue reads a document (JSON or YAML) as plain values, events with
// no actions dropped (the reference omits empty event lists).
func docValue(t *testing.T, text string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	b, _ := json.Marshal(v)
	_ = json.Unmarshal(b, &v)
	return v
}

// TestWorkflowDocumentProfiles: portable agent profiles bind to a local
// profile of that agent (and model); one that matches nothing is left
// unbound with a warning naming the field, and automations start agents
// with the bound profile.
func TestWorkflowDocumentProfiles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	doc := `{"version":1,"type":"kandev_workflow","workflows":[{"name":"P","agent_profile":{"agent_name":"mock-agent"},"steps":[
		{"name":"A","position":0,"color":"","events":{},"is_start_step":true,"show_in_command_panel":false,"allow_manual_move":true,
		 "agent_profile":{"agent_name":"codex","model":"no-such-model"},"auto_advance_requires_signal":false,"cancel_triggers_turn_complete":false}]}]}`
	got := importDoc(h, h.ws, doc)
	w, st := got.Workflows[0].Workflow, got.Workflows[0].Steps[0]
	if w.AgentProfileID == "" || st.AgentProfileID != "" {
		t.Fatalf("got workflow profile %q step profile %q, want the workflow bound and the step not", w.AgentProfileID, st.AgentProfileID)
	}
	if want := []string{"document.workflows[0].steps[0].agent_profile: no local agent profile of that agent and model; the default profile is used"}; !reflect.DeepEqual(got.Warnings, want) {
		t.Fatalf("warnings: got %q, want %q", got.Warnings, want)
	}
	var exported WorkflowDocument
	if err := json.Unmarshal([]byte(exportDoc(h, w.ID)), &exported); err != nil || exported.Workflows[0].AgentProfile == nil ||
		exported.Workflows[0].AgentProfile.AgentName != "mock-agent" {
		t.Fatalf("export: got %+v (%v), want the workflow's profile as mock-agent", exported, err)
	}
}

// stepsAt is n copies of step, named S0… at positions 0….
func stepsAt(step string, n int) []string {
	many := make([]string, n)
	for i := range many {
		many[i] = strings.Replace(strings.Replace(step, `"A"`, fmt.Sprintf(`"S%d"`, i), 1), `"position":0`, fmt.Sprintf(`"position":%d`, i), 1)
	}
	return many
}

// yamlBomb is a billion-laughs document: ten levels of nine aliases each.
func yamlBomb() string {
	bomb := "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	for i, prev := 'b', 'a'; i <= 'j'; i, prev = i+1, i {
		bomb += fmt.Sprintf("%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", i, i, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	return bomb
}

// TestWorkflowImportRejectsHostileDocuments: every malformed document is
// refused naming the field and creates nothing; a YAML bomb is cut off by
// the expansion budget, not by running out of memory.
func TestWorkflowImportRejectsHostileDocuments(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// step leaves out events and is_start_step, which cases add (a JSON
	// object's repeated key would silently keep its last value).
	step := `{"name":"A","position":0,"color":"","show_in_command_panel":false,"allow_manual_move":true,"auto_advance_requires_signal":false,"cancel_triggers_turn_complete":false}`
	doc := func(workflows string) string {
		return `{"version":1,"type":"kandev_workflow","workflows":[` + workflows + `]}`
	}
	wf := func(steps ...string) string { return `{"name":"W","steps":[` + strings.Join(steps, ",") + `]}` }
	withStep := func(k, v string) string {
		return strings.Replace(step, `"name":"A"`, `"name":"A",`+fmt.Sprintf("%q:%s", k, v), 1)
	}
	many := stepsAt(step, kanban.MaxWorkflowSteps+1)
	second := strings.Replace(strings.Replace(step, `"A"`, `"B"`, 1), `"position":0`, `"position":1`, 1)
	bomb := yamlBomb()
	cases := []struct{ name, doc, field string }{
		{"wrong type", strings.Replace(doc(wf(step)), "kandev_workflow", "other", 1), "document.type"},
		{"wrong version", strings.Replace(doc(wf(step)), `"version":1`, `"version":2`, 1), "document.version"},
		{"old Kandev format", `{"format":"kandev_workflow","version":1,"workflow":{"name":"W"},"steps":[]}`, "document: unknown field"},
		{"unknown root field", strings.Replace(doc(wf(step)), `"version":1`, `"version":1,"extra":true`, 1), "document: unknown field"},
		{"unknown step field", doc(wf(withStep("id", `"x"`))), "document.workflows[].steps[]: unknown field"},
		{"case-mismatched key", doc(wf(strings.Replace(step, `"name"`, `"Name"`, 1))), "document.workflows[].steps[]: unknown field"},
		{"wrong value type", doc(wf(withStep("wip_limit", `"3"`))), "document.workflows[].steps[].wip_limit: expected integer"},
		{"no workflows", doc(""), "document.workflows"},
		{"duplicate workflow names", doc(wf(step) + "," + wf(step)), "document.workflows[1].name"},
		{"duplicate step names", doc(wf(step, strings.Replace(second, `"B"`, `"A"`, 1))), "document.workflows[0].steps"},
		{"duplicate positions", doc(wf(step, strings.Replace(second, `"position":1`, `"position":0`, 1))), "document.workflows[0].steps[1].position"},
		{"no steps", doc(wf()), "document.workflows[0].steps"},
		{"too many steps", doc(wf(many...)), "document.workflows[0].steps"},
		{"bad event key", doc(wf(withStep("events", `{"on_boot":[]}`))), "document.workflows[0].steps[0].events"},
		{"unknown automation", doc(wf(withStep("events", `{"on_enter":[{"type":"queue_run"}]}`))), "document.workflows[0].steps[0].events"},
		{"move by step id", doc(wf(withStep("events", `{"on_enter":[{"type":"move_to_step","config":{"step_id":"x"}}]}`))), "document.workflows[0].steps[0].events.on_enter[0].config.step_id"},
		{"move to no position", doc(wf(withStep("events", `{"on_enter":[{"type":"move_to_step","config":{"step_position":7}}]}`))), "document.workflows[0].steps[0].events.on_enter[0].config.step_position"},
		{"pull from itself", doc(wf(withStep("pull_from_step_position", "0"))), "document.workflows[0].steps[0].pull_from_step_position"},
		{"negative wip", doc(wf(withStep("wip_limit", "-1"))), "document.workflows[0].steps[0].wip_limit"},
		{"missing workflow name", doc(`{"name":"","steps":[` + step + `]}`), "document.workflows[0].name"},
		{"two start steps", doc(wf(withStep("is_start_step", "true"), strings.Replace(second, `"name":"B"`, `"name":"B","is_start_step":true`, 1))), "document.workflows[0].steps"},
		// Past the contract's bound in characters, and within it in
		// characters but past the byte bound the handler checks.
		{"two MiB", doc(wf(withStep("prompt", `"`+strings.Repeat("x", 2<<20)+`"`))), "invalid arguments for workflow.import: /document: longer than"},
		{"two MiB of two-byte characters", doc(wf(withStep("prompt", `"`+strings.Repeat("é", 3<<18)+`"`))), "document: larger than"},
		{"empty", "   ", "document: is empty"},
		{"not JSON", "{oops", "document: is not valid JSON"},
		{"YAML scalar", "kandev_workflow", "document: must be an object"},
		{"YAML bomb", bomb, "document: expands to more than"},
		{"YAML duplicate key", "version: 1\nversion: 1\n", "document: repeats a key"},
		{"YAML non-string key", "? [a]\n: 1\n", "document: has a mapping key that is not a string"},
		{"YAML deep nesting", strings.Repeat("[", 200) + strings.Repeat("]", 200), "document: is nested deeper than"},
		{"YAML custom tag", "version: !!python/object 1\n", "document"},
	}
	before := h.count("workflows")
	for _, c := range cases {
		msg := h.refuse(operator, kanban.ActionWorkflowImport, WorkflowImportIn{Document: c.doc}, kanban.CodeValidation)
		if !strings.HasPrefix(msg, c.field) {
			t.Errorf("%s: got message %q, want it to start with %q", c.name, msg, c.field)
		}
	}
	if n := h.count("workflows"); n != before {
		t.Errorf("workflows after refused imports: got %d, want %d", n, before)
	}
}
