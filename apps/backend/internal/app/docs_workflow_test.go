package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestDocsWorkflowExample: the example document on the workflow
// automation page imports, and exporting the imported workflow writes the
// same document, so the page cannot drift from what works.
func TestDocsWorkflowExample(t *testing.T) {
	t.Parallel()
	example := docsWorkflowExample(t)
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

// TestDocsWorkflowExamplePulls: on a fresh board, the example workflow of
// the workflow automation page does what the page says: tasks created in
// its Backlog are pulled into In Progress, three at most, oldest first,
// and each gets an agent with the profile chosen for it; the fourth waits
// in Backlog until a task leaves In Progress. Before pulls on arrival,
// nothing left Backlog on a fresh board.
func TestDocsWorkflowExamplePulls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	var out action.WorkflowImportOut
	e.decode(e.call(c, "import_workflow_kandev", mustJSON(t, map[string]any{"document": docsWorkflowExample(t)})), &out)
	steps := out.Workflows[0].Steps
	backlog, inProgress, review := steps[0].ID, steps[1].ID, steps[2].ID
	mock := e.profileOf("mock-agent").ID
	var tasks []string
	for i := range 4 {
		var created action.TaskCreateOut
		e.decode(e.call(c, "create_task_kandev", mustJSON(t, map[string]any{"title": fmt.Sprintf("Task %d", i+1),
			"workflow_id": out.Workflows[0].Workflow.ID, "start_agent": false, "agent_profile_id": mock})), &created)
		if created.Task.WorkflowStepID != backlog {
			t.Fatalf("task %d created on %s, want Backlog", i+1, created.Task.WorkflowStepID)
		}
		tasks = append(tasks, created.Task.ID)
		e.settleFlow()
	}
	for i, want := range []string{inProgress, inProgress, inProgress, backlog} {
		if got := e.task(tasks[i]).WorkflowStepID; got != want {
			t.Fatalf("task %d on step %s, want %s: %s", i+1, got, want, dumpConversation(e.conversation(tasks[i])))
		}
	}
	for _, id := range tasks[:3] {
		var l kanban.List[kanban.Session]
		e.dispatch(kanban.ActionSessionList, action.SessionListIn{TaskID: id}, &l)
		if len(l.Items) != 1 || l.Items[0].AgentProfileID != mock {
			t.Fatalf("pulled task's sessions: %+v, want one with the chosen mock-agent profile", l.Items)
		}
	}
	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: tasks[0], WorkflowStepID: review}, nil)
	e.settleFlow()
	if got := e.task(tasks[3]).WorkflowStepID; got != inProgress {
		t.Fatalf("the fourth task stayed on %s once In Progress had room", got)
	}
}

// docsWorkflowExample is the example document of docs/public/workflows.md.
func docsWorkflowExample(t *testing.T) string {
	t.Helper()
	page, err := os.ReadFile("../../../../docs/public/workflows.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(page), "<!-- workflow-example -->\n```json\n")
	if !ok {
		t.Fatal("no workflow example on the page")
	}
	example, _, _ := strings.Cut(after, "\n```")
	return example
}

// settleFlow waits (bounded) until the workflow engine has no work left.
func (e *env) settleFlow() {
	e.t.Helper()
	deadline := time.Now().Add(agentWait)
	for e.b.flow.Busy() {
		if time.Now().After(deadline) {
			e.t.Fatal("the workflow engine never settled")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
