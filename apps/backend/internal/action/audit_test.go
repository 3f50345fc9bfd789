package action

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// auditList lists the audit log through audit.list.
func (h *harness) auditList(in AuditListIn) kanban.List[kanban.AuditEntry] {
	h.t.Helper()
	return call[kanban.List[kanban.AuditEntry]](h, operator, kanban.ActionAuditList, in)
}

func TestAuditRecordsWritesOnly(t *testing.T) {
	h := newHarness(t)
	const canary = "PROMPT-CANARY-7d1f0c"
	op := Principal{Kind: Operator, Via: "ws", From: "127.0.0.1:5000"}
	out := call[TaskCreateOut](h, op, kanban.ActionTaskCreate, map[string]any{"title": "Audited", "prompt": canary + " do the thing",
		"workflow_id": h.wf, "start_agent": false})
	call[kanban.List[kanban.Task]](h, op, kanban.ActionTaskList, map[string]any{"workflow_id": h.wf})

	got := h.auditList(AuditListIn{})
	if len(got.Items) != 1 {
		t.Fatalf("got %d audit entries, want 1 (task.create; reads are not audited): %+v", len(got.Items), got.Items)
	}
	e := got.Items[0]
	if e.Action != kanban.ActionTaskCreate || e.Actor != "operator" || e.ActorKind != "operator" || e.Via != "ws" || e.From != "127.0.0.1:5000" {
		t.Errorf("got entry %+v, want task.create by operator via ws from 127.0.0.1:5000", e)
	}
	if !strings.Contains(strings.Join(e.Targets, ","), out.Task.ID) || !strings.Contains(strings.Join(e.Targets, ","), h.wf) {
		t.Errorf("got targets %v, want the workflow %s and the created task %s", e.Targets, h.wf, out.Task.ID)
	}
	if strings.Contains(e.Summary, canary) || !strings.Contains(e.Summary, `title="Audited"`) || !strings.Contains(e.Summary, "prompt=<") {
		t.Errorf("got summary %q, want the title, the prompt's length only", e.Summary)
	}
	if d := time.Since(e.At); d < 0 || d > time.Minute {
		t.Errorf("got at %v, want now", e.At)
	}
}

func TestAuditSessionActorAndRefusals(t *testing.T) {
	h := newHarness(t)
	task := h.task("Mine")
	sess := h.session(task, kanban.ModeTask)
	// Refused (contract) and failed (not found) calls leave no entry:
	// refuse snapshots the audit tables too.
	h.refuse(sess, kanban.ActionTaskMove, map[string]any{"task_id": "self", "bogus": 1}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionTaskMove, map[string]any{"task_id": "missing", "workflow_step_id": h.steps[1].ID}, kanban.CodeNotFound)
	h.refuse(sess, kanban.ActionAuditList, map[string]any{}, kanban.CodeForbidden)
	if n := h.count("audit_log"); n != 0 {
		t.Fatalf("got %d audit entries after refusals, want 0", n)
	}
	call[kanban.Task](h, sess, kanban.ActionTaskMove, map[string]any{"task_id": "self", "workflow_step_id": h.steps[1].ID})
	got := h.auditList(AuditListIn{Actor: "session:" + sess.SessionID})
	if len(got.Items) != 1 {
		t.Fatalf("got %d entries of the session, want 1", len(got.Items))
	}
	e := got.Items[0]
	if e.Action != kanban.ActionTaskMove || e.ActorKind != "session" || e.SessionID != sess.SessionID || e.TaskID != task.ID || e.Via != "internal" {
		t.Errorf("got entry %+v, want task.move by the session bound to %s", e, task.ID)
	}
	if len(e.Targets) == 0 || e.Targets[0] != task.ID {
		t.Errorf(`got targets %v, want "self" resolved to %s first`, e.Targets, task.ID)
	}
}

// A Writes action that changed nothing (archiving an archived task) has
// no entry; an External one has its entry even when it wrote nothing
// through the store (the registry appends it).
func TestAuditEntryWithoutStoreWrite(t *testing.T) {
	h := newHarness(t)
	task := h.task("Archive me")
	call[kanban.Task](h, operator, kanban.ActionTaskArchive, map[string]any{"task_id": task.ID})
	before := h.snapshot()
	call[kanban.Task](h, operator, kanban.ActionTaskArchive, map[string]any{"task_id": task.ID})
	h.assertUnchanged(before, "archiving an archived task")
	if got := h.auditList(AuditListIn{Target: task.ID, Action: string(kanban.ActionTaskArchive)}); len(got.Items) != 1 {
		t.Fatalf("got %d task.archive entries, want 1", len(got.Items))
	}
	h.reg.actions[kanban.ActionTaskArchive] = &registered{c: &Contract{name: kanban.ActionTaskArchive, effect: External},
		run: func(context.Context, Principal, json.RawMessage) (any, error) { return &kanban.Task{ID: task.ID}, nil }}
	if _, err := h.reg.audited(context.Background(), h.reg.actions[kanban.ActionTaskArchive], operator, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if got := h.auditList(AuditListIn{Target: task.ID, Action: string(kanban.ActionTaskArchive)}); len(got.Items) != 2 {
		t.Fatalf("an External action that wrote nothing: got %d entries, want 2", len(got.Items))
	}
}

func TestAuditListFiltersAndPages(t *testing.T) {
	h := newHarness(t)
	a, b := h.task("A"), h.task("B")
	for range 3 {
		call[kanban.Task](h, operator, kanban.ActionTaskUpdate, map[string]any{"task_id": a.ID, "title": "A again"})
	}
	call[kanban.Task](h, operator, kanban.ActionTaskUpdate, map[string]any{"task_id": b.ID, "title": "B again"})
	mid := kanban.Now()
	call[kanban.Task](h, operator, kanban.ActionTaskArchive, map[string]any{"task_id": b.ID})

	if got := h.auditList(AuditListIn{Target: a.ID}); len(got.Items) != 3 {
		t.Errorf("target filter: got %d, want 3", len(got.Items))
	}
	if got := h.auditList(AuditListIn{Action: string(kanban.ActionTaskArchive)}); len(got.Items) != 1 || got.Items[0].Targets[0] != b.ID {
		t.Errorf("action filter: got %+v, want the one archive of B", got.Items)
	}
	if got := h.auditList(AuditListIn{Since: mid.Format(time.RFC3339Nano)}); len(got.Items) != 1 {
		t.Errorf("since filter: got %d, want 1", len(got.Items))
	}
	if got := h.auditList(AuditListIn{Until: mid.Format(time.RFC3339Nano)}); len(got.Items) != 4 {
		t.Errorf("until filter: got %d, want 4", len(got.Items))
	}
	if got := h.auditList(AuditListIn{Actor: "session:nobody"}); len(got.Items) != 0 {
		t.Errorf("actor filter: got %d, want 0", len(got.Items))
	}
	var seen []string
	page := h.auditList(AuditListIn{Limit: 2})
	for {
		for _, e := range page.Items {
			seen = append(seen, e.ID)
		}
		if page.NextCursor == "" {
			break
		}
		page = h.auditList(AuditListIn{Limit: 2, Cursor: page.NextCursor})
	}
	if len(seen) != 5 {
		t.Errorf("paged through %d entries, want 5", len(seen))
	}
	h.refuse(operator, kanban.ActionAuditList, map[string]any{"since": "yesterday"}, kanban.CodeValidation)

	n, err := h.st.PruneAudit(context.Background(), kanban.Now().Add(time.Second))
	if err != nil || n != 5 || h.count("audit_targets") != 0 {
		t.Errorf("prune: got %d, %v (targets left %d), want 5 entries and their targets gone", n, err, h.count("audit_targets"))
	}
}
