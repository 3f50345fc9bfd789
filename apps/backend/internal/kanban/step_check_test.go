package kanban

import (
	"strings"
	"testing"
)

func TestWorkflowStepCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		st    WorkflowStep
		field string
	}{
		{"plain", WorkflowStep{Name: "Review", WIPLimit: MaxWIPLimit, AutoArchiveAfterHours: MaxAutoArchiveHours}, ""},
		{"no name", WorkflowStep{}, "doc.steps[1].name"},
		{"two-line name", WorkflowStep{Name: "a\nb"}, "doc.steps[1].name"},
		{"long name", WorkflowStep{Name: strings.Repeat("n", MaxNameLen+1)}, "doc.steps[1].name"},
		{"long color", WorkflowStep{Name: "s", Color: strings.Repeat("c", MaxNameLen+1)}, "doc.steps[1].color"},
		{"long prompt", WorkflowStep{Name: "s", Prompt: strings.Repeat("p", MaxPromptLen+1)}, "doc.steps[1].prompt"},
		{"negative wip", WorkflowStep{Name: "s", WIPLimit: -1}, "doc.steps[1].wip_limit"},
		{"wip over the bound", WorkflowStep{Name: "s", WIPLimit: MaxWIPLimit + 1}, "doc.steps[1].wip_limit"},
		{"negative auto-archive", WorkflowStep{Name: "s", AutoArchiveAfterHours: -1}, "doc.steps[1].auto_archive_after_hours"},
		{"auto-archive over the bound", WorkflowStep{Name: "s", AutoArchiveAfterHours: MaxAutoArchiveHours + 1}, "doc.steps[1].auto_archive_after_hours"},
		{"unknown event", WorkflowStep{Name: "s", Events: map[string][]StepAction{"whenever": nil}}, "doc.steps[1].events"},
	}
	for _, c := range cases {
		checkField(t, c.name, c.st.Check("doc.steps[1]"), c.field)
	}
	checkField(t, "top-level field names", WorkflowStep{}.Check(""), "name")
}

func TestCheckSteps(t *testing.T) {
	t.Parallel()
	many := make([]WorkflowStep, MaxWorkflowSteps+1)
	for i := range many {
		many[i].Name = strings.Repeat("s", i+1)
	}
	cases := []struct {
		name  string
		steps []WorkflowStep
		field string
	}{
		{"two steps, one start", []WorkflowStep{{Name: "A"}, {Name: "B", IsStartStep: true}}, ""},
		{"the most steps", many[:MaxWorkflowSteps], ""},
		{"no steps", nil, "steps"},
		{"too many steps", many, "steps"},
		{"a name twice", []WorkflowStep{{Name: "A"}, {Name: "A"}}, "steps"},
		{"two start steps", []WorkflowStep{{Name: "A", IsStartStep: true}, {Name: "B", IsStartStep: true}}, "steps"},
		{"a bad step", []WorkflowStep{{Name: "A"}, {Name: "B", WIPLimit: -1}}, "steps[1].wip_limit"},
	}
	for _, c := range cases {
		checkField(t, c.name, CheckSteps("steps", c.steps), c.field)
	}
}
