package app

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// officeTree is a parent task, an office session on its child "me", and
// a grandchild, a sibling and a task in another workspace.
type officeTree struct {
	root, me, kid, sib, foreign *kanban.Task
	s                           *session
}

func newOfficeTree(e *env) officeTree {
	e.t.Helper()
	var o officeTree
	o.root = e.newTask("root")
	o.me = subtaskOf(e, o.root.ID, "me")
	o.kid = subtaskOf(e, o.me.ID, "kid")
	o.sib = subtaskOf(e, o.root.ID, "sibling")
	o.foreign = foreignTask(e)
	o.s = e.sessionMCP(kanban.ModeOffice, o.me.ID)
	return o
}

func TestOfficeDocumentTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := newOfficeTree(e)
	c := o.s.Client
	var d kanban.Document
	callJSON(e, c, "write_task_document_kandev", `{"document_key":"spec","title":"Spec","content":"v1"}`, &d)
	callJSON(e, c, "write_task_document_kandev", `{"task_id":"self","document_key":"spec","content":"v2"}`, &d)
	if d.Revision != 2 || d.Title != "Spec" || d.Type != "markdown" {
		t.Fatalf("second write: got %+v, want revision 2 keeping title and type", d)
	}
	if n := dbInt(e, `SELECT COUNT(*) FROM task_document_revisions WHERE task_id = ? AND key = 'spec'`, o.me.ID); n != 2 {
		t.Fatalf("revisions: got %d, want 2", n)
	}
	callJSON(e, c, "write_task_document_kandev", fmt.Sprintf(`{"task_id":%q,"document_key":"decisions.log","type":"text","content":"from the child"}`, o.root.ID), &d)
	if got := dbStr(e, `SELECT content FROM task_documents WHERE task_id = ? AND key = 'decisions.log'`, o.root.ID); got != "from the child" {
		t.Fatalf("write to the parent: got %q", got)
	}
	for _, id := range []string{o.kid.ID, o.sib.ID} {
		refused(e, c, "write_task_document_kandev", fmt.Sprintf(`{"task_id":%q,"document_key":"x","content":"x"}`, id),
			"FORBIDDEN: a session may only write documents of its own task or the task's ancestors")
	}
	refused(e, c, "write_task_document_kandev", fmt.Sprintf(`{"task_id":%q,"document_key":"x","content":"x"}`, o.foreign.ID),
		"FORBIDDEN: task is outside this session's workspace")

	var list struct {
		Items      []kanban.Document `json:"items"`
		NextCursor string            `json:"next_cursor"`
	}
	callJSON(e, c, "write_task_document_kandev", `{"document_key":"notes","content":"n"}`, &d)
	callJSON(e, c, "list_task_documents_kandev", `{"limit":1}`, &list)
	if len(list.Items) != 1 || list.Items[0].Key != "notes" || list.Items[0].Content != "" || list.NextCursor == "" {
		t.Fatalf("list page 1: got %+v, want notes without content and a cursor", list)
	}
	cursor := list.NextCursor
	list.Items, list.NextCursor = nil, ""
	callJSON(e, c, "list_task_documents_kandev", `{"limit":1,"cursor":"`+cursor+`"}`, &list)
	if len(list.Items) != 1 || list.Items[0].Key != "spec" || list.NextCursor != "" {
		t.Fatalf("list page 2: got %+v, want spec and no cursor", list)
	}
	callJSON(e, c, "get_task_document_kandev", fmt.Sprintf(`{"task_id":%q,"document_key":"decisions.log"}`, o.root.ID), &d)
	if d.Content != "from the child" || d.Type != "text" {
		t.Fatalf("get from the parent: got %+v", d)
	}
	callJSON(e, c, "list_task_documents_kandev", fmt.Sprintf(`{"task_id":%q}`, o.kid.ID), &list)
	refused(e, c, "get_task_document_kandev", `{"document_key":"missing"}`, "NOT_FOUND: document not found")
	refused(e, c, "list_task_documents_kandev", fmt.Sprintf(`{"task_id":%q}`, o.sib.ID),
		"FORBIDDEN: a session reads documents of its task, the task's ancestors and its descendants only")
}

func TestOfficeDecisionTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := newOfficeTree(e)
	c := o.s.Client
	var first, second action.StepDecideOut
	callJSON(e, c, "record_step_decision_kandev", `{"decision":"rejected","reason":"Tests are missing."}`, &first)
	callJSON(e, c, "record_step_decision_kandev", `{"task_id":"self","decision":"approved","reason":"Tests added."}`, &second)
	if first.Supersedes != "" || second.Supersedes != first.Artifact.ID {
		t.Fatalf("supersedes: got %q then %q, want none then the first decision", first.Supersedes, second.Supersedes)
	}
	var latest kanban.Artifact
	e.dispatch(kanban.ActionArtifactLatest, action.ArtifactKindIn{TaskID: o.me.ID, Kind: kanban.ArtifactDecision}, &latest)
	var data struct {
		StepID   string `json:"step_id"`
		Decision string `json:"decision"`
	}
	if err := json.Unmarshal(latest.Data, &data); err != nil || data.Decision != "approved" || data.StepID != o.me.WorkflowStepID {
		t.Fatalf("latest decision: got %s (%v), want the approval on the task's step", latest.Data, err)
	}
	callJSON(e, c, "record_step_decision_kandev", fmt.Sprintf(`{"task_id":%q,"decision":"approved","reason":"Subtask fine."}`, o.kid.ID), &first)
	refused(e, c, "record_step_decision_kandev", fmt.Sprintf(`{"task_id":%q,"decision":"approved","reason":"r"}`, o.root.ID),
		"FORBIDDEN: a session may only record decisions on its own task and its subtasks")
	refused(e, c, "record_step_decision_kandev", fmt.Sprintf(`{"task_id":%q,"decision":"approved","reason":"r"}`, o.foreign.ID),
		"FORBIDDEN: task is outside this session's workspace")
}

// TestOfficeSharedTools: plans, related tasks and rich output work in
// office mode, within the same reach as in task mode.
func TestOfficeSharedTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := newOfficeTree(e)
	c := o.s.Client
	var p kanban.Plan
	callJSON(e, c, "create_task_plan_kandev", fmt.Sprintf(`{"task_id":%q,"content":"delegate"}`, o.kid.ID), &p)
	if p.TaskID != o.kid.ID || p.CreatedBy != "agent" {
		t.Fatalf("plan on the subtask: got %+v", p)
	}
	refused(e, c, "update_task_plan_kandev", fmt.Sprintf(`{"task_id":%q,"content":"x"}`, o.sib.ID),
		"FORBIDDEN: a session's plans are limited to its task, the task's ancestors, its descendants and the tasks it created")
	var rel action.RelatedOut
	callJSON(e, c, "list_related_tasks_kandev", `{"task_id":"self"}`, &rel)
	if rel.Parent == nil || rel.Parent.ID != o.root.ID || len(rel.Children) != 1 || len(rel.Siblings) != 1 {
		t.Fatalf("related in office: got %+v", rel)
	}
	refused(e, c, "list_related_tasks_kandev", fmt.Sprintf(`{"task_id":%q}`, o.foreign.ID), "FORBIDDEN: task is outside this session's workspace")
	var rich kanban.Artifact
	callJSON(e, c, "show_rich_output_kandev", `{"version":1,"title":"Status","blocks":[{"type":"metrics","items":[{"label":"Open tasks","value":"3"}]}]}`, &rich)
	if rich.TaskID != o.me.ID {
		t.Fatalf("rich output: got task %s, want the bound task", rich.TaskID)
	}
	names := toolNames(t, c)
	for _, tool := range []string{"step_complete_kandev", "show_walkthrough_kandev", "move_task_kandev", "create_task_kandev"} {
		if names[tool] {
			t.Errorf("office mode lists %s, want it hidden", tool)
		}
	}
}
