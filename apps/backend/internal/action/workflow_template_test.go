package action

import (
	"encoding/json"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestTemplateFiles: the embedded template files are exactly TemplateIDs,
// each holds one workflow whose name and description the listing shows,
// and the default is one of them.
func TestTemplateFiles(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(templateFS, "templates/*")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range files {
		ids = append(ids, strings.TrimSuffix(strings.TrimPrefix(f, "templates/"), ".yaml"))
	}
	if got, want := slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(TemplateIDs)); !slices.Equal(got, want) {
		t.Fatalf("embedded templates %v, want TemplateIDs %v", got, want)
	}
	if !slices.Contains(TemplateIDs, DefaultTemplateID) {
		t.Fatalf("the default template %q is not a template", DefaultTemplateID)
	}
	names := map[string]bool{}
	for _, id := range TemplateIDs {
		tmpl, err := Template(id)
		if err != nil {
			t.Fatalf("template %s: %v", id, err)
		}
		if tmpl.Name == "" || tmpl.Description == "" || names[tmpl.Name] {
			t.Errorf("template %s: name %q, description %q; want both, the name not another template's", id, tmpl.Name, tmpl.Description)
		}
		names[tmpl.Name] = true
	}
}

// TestTemplatesImportAndRoundTrip: every template imports cleanly by its
// template_id, every automation it uses is one of the engine's, and
// exporting what it created gives back the template's document, which
// imports elsewhere and exports to the same bytes.
func TestTemplatesImportAndRoundTrip(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	other, _, _ := h.otherBoard()
	for _, id := range TemplateIDs {
		tmpl, err := Template(id)
		if err != nil {
			t.Fatal(err)
		}
		name := tmpl.Name + " (from the gallery)"
		got := call[WorkflowImportOut](h, operator, kanban.ActionWorkflowImport, WorkflowImportIn{WorkspaceID: h.ws, TemplateID: id, Name: name})
		if !slices.Equal(got.Created, []string{name}) || len(got.Warnings) != 0 || len(got.Workflows) != 1 ||
			len(got.Workflows[0].Steps) != len(tmpl.Document.Workflows[0].Steps) {
			t.Fatalf("template %s: import got %+v, want %q created with its %d steps and no warning", id, got, name, len(tmpl.Document.Workflows[0].Steps))
		}
		for _, st := range got.Workflows[0].Steps {
			for ev, actions := range st.Events {
				for _, a := range actions {
					if _, ok := kanban.LookupAutomation(a.Type); !ok || !slices.Contains(kanban.StepEventKinds, ev) {
						t.Errorf("template %s, step %s: %s %s is not in the engine's table", id, st.Name, ev, a.Type)
					}
				}
			}
		}
		exported := exportDoc(h, got.Workflows[0].Workflow.ID)
		var doc WorkflowDocument
		if err := json.Unmarshal([]byte(exported), &doc); err != nil {
			t.Fatal(err)
		}
		doc.Workflows[0].Name = tmpl.Name
		if a, b := templateValue(t, &doc), templateValue(t, tmpl.Document); !reflect.DeepEqual(a, b) {
			t.Errorf("template %s: the export of what it created differs from the template:\n got %s\nwant %s", id, mustJSON(t, a), mustJSON(t, b))
		}
		again := importDoc(h, other.ID, exported)
		if len(again.Workflows) != 1 {
			t.Fatalf("template %s: re-import of the export: got %+v", id, again)
		}
		if second := exportDoc(h, again.Workflows[0].Workflow.ID); second != exported {
			t.Errorf("template %s: export after re-import:\n got %s\nwant %s", id, second, exported)
		}
	}
}

// templateValue is a document as plain JSON values, with omitted events read as
// none, so two documents that say the same compare equal.
func templateValue(t *testing.T, d *WorkflowDocument) any {
	t.Helper()
	for i := range d.Workflows {
		for j := range d.Workflows[i].Steps {
			if d.Workflows[i].Steps[j].Events == nil {
				d.Workflows[i].Steps[j].Events = map[string][]kanban.StepAction{}
			}
		}
	}
	var v any
	if err := json.Unmarshal([]byte(mustJSON(t, d)), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTemplateList: workflow.template.list pages through every template
// in gallery order, each with its document; a cursor that is no
// template's is refused.
func TestTemplateList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var ids []string
	in := ListIn{Limit: 2}
	for range TemplateIDs {
		page := call[kanban.List[WorkflowTemplate]](h, operator, kanban.ActionWorkflowTemplateList, in)
		for _, it := range page.Items {
			if it.Document == nil || len(it.Document.Workflows) != 1 || it.Document.Workflows[0].Name != it.Name {
				t.Fatalf("template %s: got document %+v, want its one workflow named %q", it.ID, it.Document, it.Name)
			}
			ids = append(ids, it.ID)
		}
		if in.Cursor = page.NextCursor; in.Cursor == "" {
			break
		}
	}
	if !slices.Equal(ids, TemplateIDs) {
		t.Fatalf("listed %v, want %v", ids, TemplateIDs)
	}
	all := call[kanban.List[WorkflowTemplate]](h, operator, kanban.ActionWorkflowTemplateList, ListIn{})
	if len(all.Items) != len(TemplateIDs) || all.NextCursor != "" {
		t.Fatalf("one default page: got %d items, cursor %q", len(all.Items), all.NextCursor)
	}
	h.refuse(operator, kanban.ActionWorkflowTemplateList, ListIn{Cursor: "nope"}, kanban.CodeValidation)
}

// TestImportTemplateRefusals: workflow.import takes a document or a
// template_id (not both, not neither); name renames the only workflow of
// what is imported and is refused for a document of two; each refusal
// writes nothing. The same template twice under two names makes two
// workflows; under one name the second is skipped.
func TestImportTemplateRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	two := `{"version":1,"type":"kandev_workflow","workflows":[` +
		`{"name":"A","steps":[{"name":"S","position":0,"color":"","events":{},"is_start_step":true,"show_in_command_panel":false,"allow_manual_move":true,"auto_advance_requires_signal":false,"cancel_triggers_turn_complete":false}]},` +
		`{"name":"B","steps":[{"name":"S","position":0,"color":"","events":{},"is_start_step":true,"show_in_command_panel":false,"allow_manual_move":true,"auto_advance_requires_signal":false,"cancel_triggers_turn_complete":false}]}]}`
	for _, c := range []struct {
		name string
		in   WorkflowImportIn
		code kanban.Code
		want string
	}{
		{"neither", WorkflowImportIn{}, kanban.CodeValidation, "template_id"},
		{"both", WorkflowImportIn{Document: two, TemplateID: "kanban"}, kanban.CodeValidation, "not both"},
		{"unknown template", WorkflowImportIn{TemplateID: "kanbann"}, kanban.CodeValidation, "/template_id: must be one of: kanban, plan-and-build"},
		{"name for two workflows", WorkflowImportIn{Document: two, Name: "C"}, kanban.CodeValidation, "holds 2"},
		{"name on two lines", WorkflowImportIn{TemplateID: "kanban", Name: "Kan\nban"}, kanban.CodeValidation, "name"},
	} {
		if msg := h.refuse(operator, kanban.ActionWorkflowImport, c.in, c.code); !strings.Contains(msg, c.want) {
			t.Errorf("%s: got %q, want it to mention %q", c.name, msg, c.want)
		}
	}
	// The seeded board is the Kanban template: its name is taken.
	skipped := call[WorkflowImportOut](h, operator, kanban.ActionWorkflowImport, WorkflowImportIn{TemplateID: "kanban"})
	if !slices.Equal(skipped.Skipped, []string{"Kanban"}) || len(skipped.Created) != 0 {
		t.Fatalf("the Kanban template on the seeded board: got %+v, want it skipped by name", skipped)
	}
	for _, name := range []string{"Team board", "Solo board"} {
		got := call[WorkflowImportOut](h, operator, kanban.ActionWorkflowImport, WorkflowImportIn{TemplateID: "kanban", Name: name})
		if !slices.Equal(got.Created, []string{name}) || got.Workflows[0].Workflow.Name != name {
			t.Fatalf("template under the name %q: got %+v", name, got)
		}
	}
	if n := h.count("workflows"); n != 3 {
		t.Fatalf("got %d workflows, want the seeded one and the two made from the template", n)
	}
}

// TestDefaultWorkflowIsKanbanTemplate: what Seed creates is the Kanban
// template's workflow, step for step.
func TestDefaultWorkflowIsKanbanTemplate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tmpl, err := Template(DefaultTemplateID)
	if err != nil {
		t.Fatal(err)
	}
	var doc WorkflowDocument
	if err := json.Unmarshal([]byte(exportDoc(h, h.wf)), &doc); err != nil {
		t.Fatal(err)
	}
	if a, b := templateValue(t, &doc), templateValue(t, tmpl.Document); !reflect.DeepEqual(a, b) {
		t.Fatalf("the seeded workflow differs from the %s template:\n got %s\nwant %s", DefaultTemplateID, mustJSON(t, a), mustJSON(t, b))
	}
}
