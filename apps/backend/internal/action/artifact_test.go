package action

import (
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestPlanRevisions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("planned")
	sess := h.session(task, kanban.ModeTask)
	created := call[kanban.Plan](h, sess, kanban.ActionPlanCreate, PlanCreateIn{TaskID: "self", Title: "Plan", Content: "1. do it"})
	if created.TaskID != task.ID || created.CreatedBy != "agent" || created.Revision != 1 {
		t.Errorf("plan.create by session: got %+v, want revision 1 by agent on the bound task", created)
	}
	h.refuse(sess, kanban.ActionPlanCreate, PlanCreateIn{TaskID: "self", Content: "again"}, kanban.CodeConflict)
	h.refuse(sess, kanban.ActionPlanUpdate, PlanUpdateIn{TaskID: "self"}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionPlanGet, TaskRefIn{TaskID: "self"}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionPlanGet, TaskRefIn{}, kanban.CodeValidation)

	updated := call[kanban.Plan](h, operator, kanban.ActionPlanUpdate, PlanUpdateIn{TaskID: task.ID, Content: "1. do it\n2. test it"})
	if updated.Revision != 2 || updated.Title != "Plan" || updated.CreatedBy != "agent" {
		t.Errorf("plan.update: got %+v, want revision 2 keeping title and creator", updated)
	}
	revs := call[kanban.List[kanban.Plan]](h, sess, kanban.ActionPlanRevisions, TaskPageIn{TaskID: "self"})
	if len(revs.Items) != 2 || revs.Items[0].Revision != 2 || revs.Items[0].CreatedBy != "operator" || revs.Items[1].CreatedBy != "agent" {
		t.Errorf("plan.revisions: got %+v, want revisions 2 (operator) then 1 (agent)", revs.Items)
	}
	page1 := call[kanban.List[kanban.Plan]](h, operator, kanban.ActionPlanRevisions, TaskPageIn{TaskID: task.ID, Limit: 1})
	page2 := call[kanban.List[kanban.Plan]](h, operator, kanban.ActionPlanRevisions, TaskPageIn{TaskID: task.ID, Limit: 1, Cursor: page1.NextCursor})
	if len(page1.Items) != 1 || len(page2.Items) != 1 || page2.Items[0].Revision != 1 || page2.NextCursor != "" {
		t.Errorf("plan.revisions paged: got %+v then %+v, want revision 2 then 1", page1, page2)
	}
	got := call[kanban.Plan](h, sess, kanban.ActionPlanGet, TaskRefIn{TaskID: "self"})
	if got.Content != updated.Content {
		t.Errorf("plan.get: got %q, want %q", got.Content, updated.Content)
	}
	if !h.pub.has(WorkspaceTopic(h.ws), kanban.EventPlanUpdated.Name()) {
		t.Errorf("plan.updated: not published")
	}
	call[Deleted](h, sess, kanban.ActionPlanDelete, TaskRefIn{TaskID: "self"})
	h.refuse(sess, kanban.ActionPlanGet, TaskRefIn{TaskID: "self"}, kanban.CodeNotFound)
	if n := h.count("task_plan_revisions"); n != 0 {
		t.Errorf("revisions after plan.delete: got %d, want 0", n)
	}
}

func TestDocuments(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("documented")
	sess := h.session(task, kanban.ModeOffice)
	d := call[kanban.Document](h, sess, kanban.ActionDocumentWrite, DocumentWriteIn{TaskID: "self", Key: "spec", Title: "Spec", Content: "v1"})
	if d.Revision != 1 || d.Type != "markdown" {
		t.Errorf("document.write: got %+v, want revision 1, markdown", d)
	}
	d = call[kanban.Document](h, operator, kanban.ActionDocumentWrite, DocumentWriteIn{TaskID: task.ID, Key: "spec", Content: "v2"})
	if d.Revision != 2 || d.Title != "Spec" {
		t.Errorf("document.write again: got %+v, want revision 2 keeping the title", d)
	}
	h.refuse(sess, kanban.ActionDocumentGet, DocumentGetIn{TaskID: "self", Key: "missing"}, kanban.CodeNotFound)
	l := call[kanban.List[kanban.Document]](h, sess, kanban.ActionDocumentList, TaskPageIn{TaskID: "self"})
	if len(l.Items) != 1 || l.Items[0].Content != "" || l.Items[0].Key != "spec" {
		t.Errorf("document.list: got %+v, want the spec document without content", l.Items)
	}
	got := call[kanban.Document](h, sess, kanban.ActionDocumentGet, DocumentGetIn{TaskID: "self", Key: "spec"})
	if got.Content != "v2" {
		t.Errorf("document.get: got %q, want v2", got.Content)
	}
	if !h.pub.has(WorkspaceTopic(h.ws), kanban.EventDocumentUpdated.Name()) {
		t.Errorf("document.updated: not published")
	}
}

func TestArtifacts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("reviewed")
	sess := h.session(task, kanban.ModeTask)
	in := map[string]any{"task_id": "self", "kind": kanban.ArtifactFindings, "data": map[string]any{"findings": []any{map[string]any{"title": "nit", "severity": "nit", "body": "b"}}}}
	a := call[kanban.Artifact](h, sess, kanban.ActionArtifactCreate, in)
	if a.SessionID != sess.SessionID || a.TaskID != task.ID || a.Kind != kanban.ArtifactFindings {
		t.Errorf("artifact.create: got %+v, want the session's id and task", a)
	}
	in["data"] = map[string]any{"findings": []any{}}
	b := call[kanban.Artifact](h, sess, kanban.ActionArtifactCreate, in)
	op := call[kanban.Artifact](h, operator, kanban.ActionArtifactCreate, map[string]any{"task_id": task.ID, "kind": kanban.ArtifactRichOutput,
		"data": map[string]any{"version": 1, "title": "t", "blocks": []any{map[string]any{"type": "metrics", "items": []any{map[string]any{"label": "a", "value": "1"}}}}}})
	if op.SessionID != "" {
		t.Errorf("artifact.create by operator: got session %q, want none", op.SessionID)
	}
	for _, bad := range []map[string]any{
		{"task_id": "self", "kind": kanban.ArtifactFindings, "data": []any{}},
		{"task_id": "self", "kind": kanban.ArtifactFindings, "data": "text"},
		{"task_id": "self", "kind": kanban.ArtifactFindings},
		{"kind": kanban.ArtifactFindings, "data": map[string]any{}},
	} {
		h.refuse(sess, kanban.ActionArtifactCreate, bad, kanban.CodeValidation)
	}
	latest := call[kanban.Artifact](h, sess, kanban.ActionArtifactLatest, ArtifactKindIn{TaskID: "self", Kind: kanban.ArtifactFindings})
	if latest.ID != b.ID {
		t.Errorf("artifact.latest: got %s, want %s", latest.ID, b.ID)
	}
	all := call[kanban.List[kanban.Artifact]](h, operator, kanban.ActionArtifactList, ArtifactListIn{TaskID: task.ID})
	kind := call[kanban.List[kanban.Artifact]](h, operator, kanban.ActionArtifactList, ArtifactListIn{TaskID: task.ID, Kind: kanban.ArtifactFindings})
	if len(all.Items) != 3 || len(kind.Items) != 2 {
		t.Errorf("artifact.list: got %d in all and %d findings, want 3 and 2", len(all.Items), len(kind.Items))
	}
	del := call[ArtifactDeleteOut](h, sess, kanban.ActionArtifactDelete, ArtifactKindIn{TaskID: "self", Kind: kanban.ArtifactFindings})
	if del.Deleted != 2 {
		t.Errorf("artifact.delete: got %d, want 2", del.Deleted)
	}
	h.refuse(sess, kanban.ActionArtifactLatest, ArtifactKindIn{TaskID: "self", Kind: kanban.ArtifactFindings}, kanban.CodeNotFound)
	if n := h.count("task_artifacts"); n != 1 {
		t.Errorf("artifacts left: got %d, want the rich output only", n)
	}
	if !h.pub.has(WorkspaceTopic(h.ws), kanban.EventArtifactCreated.Name()) || !h.pub.has(WorkspaceTopic(h.ws), kanban.EventArtifactDeleted.Name()) {
		t.Errorf("artifact.created and artifact.deleted: not both published")
	}
}

func TestArtifactDataRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("shown")
	sess := h.session(task, kanban.ModeTask)
	walk := func(line, end int) map[string]any {
		return map[string]any{"task_id": "self", "kind": kanban.ArtifactWalkthrough,
			"data": map[string]any{"steps": []any{map[string]any{"file": "a.go", "line": line, "line_end": end, "text": "t"}}}}
	}
	if msg := h.refuse(sess, kanban.ActionArtifactCreate, walk(10, 9), kanban.CodeValidation); msg != "steps[0].line_end: must be >= line" {
		t.Errorf("walkthrough line_end < line: got %q", msg)
	}
	call[kanban.Artifact](h, sess, kanban.ActionArtifactCreate, walk(10, 10))
	chart := func(values ...float64) map[string]any {
		return map[string]any{"task_id": "self", "kind": kanban.ArtifactRichOutput, "data": map[string]any{"version": 1, "title": "t",
			"blocks": []any{map[string]any{"type": "chart", "chart_type": "bar", "title": "c", "summary": "s", "labels": []string{"a", "b"},
				"series": []any{map[string]any{"label": "s", "values": values}}}}}}
	}
	h.refuse(sess, kanban.ActionArtifactCreate, chart(1), kanban.CodeValidation)
	call[kanban.Artifact](h, sess, kanban.ActionArtifactCreate, chart(1, 2))
}
