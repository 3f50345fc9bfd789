package app

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var updateDocs = flag.Bool("update", false, "rewrite the generated sections of docs/public/office.md")

const officePage = "../../../../docs/public/office.md"

// The generated section of the Office page: the step events and the
// automation types, rendered from the engine's tables (kanban.StepEvents,
// kanban.AutomationTypes), so the page lists what the engine runs.
const (
	officeBegin = "<!-- generated from kanban.StepEvents and kanban.AutomationTypes: go test ./internal/app -run TestDocsOfficeTables -update -->"
	officeEnd   = "<!-- end of generated tables -->"
)

// officeTables renders the events and automations tables.
func officeTables() string {
	var b strings.Builder
	b.WriteString("| Event | When |\n| --- | --- |\n")
	for _, e := range kanban.StepEvents {
		fmt.Fprintf(&b, "| `%s` | %s |\n", e.Name, e.When)
	}
	b.WriteString("\n| Automation | `config` | What it does |\n| --- | --- | --- |\n")
	for _, t := range kanban.AutomationTypes {
		var params []string
		for _, p := range t.Params {
			s := "`" + p.Name + "`"
			if p.Kind == kanban.ParamEnum {
				s += " (" + strings.Join(p.Values, ", ") + ")"
			}
			if p.Required {
				s += " required"
			}
			params = append(params, s)
		}
		cfg := "none"
		if len(params) > 0 {
			cfg = strings.Join(params, ", ")
		}
		if len(t.OneOf) > 0 {
			cfg += "; exactly one of " + strings.Join(t.OneOf, ", ")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", t.Name, cfg, t.Desc)
	}
	return b.String()
}

// TestDocsOfficeTables: the Office page's tables of step events and
// automation types are the engine's (-update rewrites them).
func TestDocsOfficeTables(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(officePage)
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	i, j := strings.Index(page, officeBegin), strings.Index(page, officeEnd)
	if i < 0 || j < i {
		t.Fatalf("the Office page lacks its generated section markers")
	}
	want := page[:i+len(officeBegin)] + "\n\n" + officeTables() + "\n" + page[j:]
	if want == page {
		return
	}
	if !*updateDocs {
		t.Fatal("the Office page's tables differ from the engine's; run go test ./internal/app -run TestDocsOfficeTables -update")
	}
	if err := os.WriteFile(officePage, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
}
