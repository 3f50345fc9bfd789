package app

import (
	"github.com/kandev/kandev/apps/backend/internal/action"

	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestDocsWorkflowExample: the example document on the workflow
// automation page imports, and exporting the imported workflow writes the
// same document, so the page cannot drift from what works.
func TestDocsWorkflowExample(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../../../../docs/public/workflows.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(page), "<!-- workflow-example -->\n```json\n")
	if !ok {
		t.Fatal("no workflow example on the page")
	}
	example, _, _ := strings.Cut(after, "\n```")
	e := newEnv(t)
	c := e.operatorMCP()
	var out action.WorkflowImportOut
	e.decode(e.call(c, "import_workflow_kandev", mustJSON(t, map[string]any{"document": example})), &out)
	if len(out.Workflows) != 1 {
		t.Fatalf("import: got %+v, want one workflow created", out)
	}
	exported := e.call(c, "export_workflow_kandev", `{"workflow_id":"`+out.Workflows[0].Workflow.ID+`"}`)
	var a, b any
	if err := json.Unmarshal([]byte(example), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(text(exported)), &b); err != nil {
		t.Fatal(err)
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if !bytes.Equal(x, y) {
		t.Fatalf("export of the imported example differs:\n got %s\nwant %s", y, x)
	}
}
