package toolserver

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestMarkdownRecordKeys: the generated tool reference words every
// record's keys: the events record of the workflow tools names the step
// events (before: "keys match <nil>", its propertyNames being an enum),
// and no constraint prints a Go nil.
func TestMarkdownRecordKeys(t *testing.T) {
	c, err := Compile()
	if err != nil {
		t.Fatal(err)
	}
	md, err := Markdown(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md, "<nil>") {
		i := strings.Index(md, "<nil>")
		t.Fatalf("the reference prints a Go nil: %q", md[max(0, i-200):i+5])
	}
	if !strings.Contains(md, "| `events` | record | no | keys one of: "+strings.Join(kanban.StepEventKinds, ", ")+" |") {
		t.Fatal("the events record does not name the step events its keys may be")
	}
}
