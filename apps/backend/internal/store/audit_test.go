package store

import (
	"context"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func auditRecord(action kanban.Action, targets ...string) *kanban.AuditRecord {
	return &kanban.AuditRecord{Entry: kanban.AuditEntry{ID: kanban.NewID(), Actor: "operator", ActorKind: "operator",
		Action: action, Targets: targets, Summary: "title=\"x\"", Via: "ws", At: kanban.Now()}}
}

// An action's entry commits with the first of its write transactions that
// commits, and only with it: a failed transaction leaves none and hands
// the entry to the next; after the action's end no write carries it.
func TestAuditEntryRidesTheActionsTransaction(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s := newTestStore(t)
		bd := newBoard(t, s, "Audit")
		ctx := context.Background()

		rec := auditRecord(kanban.ActionWorkspaceUpdate, bd.ws.ID)
		actx := kanban.WithAudit(ctx, rec)
		// A refused write (the workspace is missing): no entry.
		if _, err := s.UpdateWorkspace(actx, "missing", new("x"), nil); kanban.ErrorCode(err) != kanban.CodeNotFound {
			t.Fatalf("update missing workspace: got %v, want NOT_FOUND", err)
		}
		if n := countRows(t, s, "audit_log"); n != 0 {
			t.Fatalf("after a failed write: got %d entries, want 0", n)
		}
		// The next write that commits carries it, the one after does not.
		if _, err := s.UpdateWorkspace(actx, bd.ws.ID, new("Renamed"), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateWorkspace(actx, bd.ws.ID, new("Renamed again"), nil); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, s, "audit_log"); n != 1 {
			t.Fatalf("after two writes: got %d entries, want 1", n)
		}
		if !rec.Close() {
			t.Error("Close: got not written, want written")
		}
		late := auditRecord(kanban.ActionWorkspaceUpdate)
		if late.Close() {
			t.Error("Close of an unwritten record: got written")
		}
		if _, err := s.UpdateWorkspace(kanban.WithAudit(ctx, late), bd.ws.ID, new("Later"), nil); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, s, "audit_log"); n != 1 {
			t.Errorf("a write after the action's end: got %d entries, want 1", n)
		}
		// A transaction that changes nothing (a deduplicated create) carries
		// no entry either; the one that creates does.
		in := kanban.TaskCreate{WorkspaceID: bd.ws.ID, Title: "Once", ExternalID: "ext-1"}
		if _, _, err := s.CreateTask(kanban.WithAudit(ctx, auditRecord(kanban.ActionTaskCreate)), in); err != nil {
			t.Fatal(err)
		}
		dedup := auditRecord(kanban.ActionTaskCreate)
		if _, again, err := s.CreateTask(kanban.WithAudit(ctx, dedup), in); err != nil || !again {
			t.Fatalf("retry: got dedup %v, %v", again, err)
		}
		if dedup.Close() || countRows(t, s, "audit_log") != 2 {
			t.Errorf("a deduplicated create: got %d entries (written %v), want only the create's", countRows(t, s, "audit_log"), dedup.Close())
		}
		got, err := s.ListAudit(ctx, kanban.AuditFilter{Target: bd.ws.ID})
		if err != nil || len(got.Items) != 1 || got.Items[0].ID != rec.Entry.ID || got.Items[0].Via != "ws" {
			t.Fatalf("list by target: got %+v, %v, want the one entry", got, err)
		}
		if err := s.CompleteAudit(ctx, rec.Entry.ID, "created-id"); err != nil {
			t.Fatal(err)
		}
		got, err = s.ListAudit(ctx, kanban.AuditFilter{Target: "created-id"})
		if err != nil || len(got.Items) != 1 || len(got.Items[0].Targets) != 2 || got.Items[0].Targets[1] != "created-id" {
			t.Fatalf("after CompleteAudit: got %+v, %v, want targets [ws, created-id]", got, err)
		}
	})
}

func TestAuditListAndPrune(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s := newTestStore(t)
		ctx := context.Background()
		old := auditRecord(kanban.ActionTaskMove, "t1")
		old.Entry.At = kanban.Now().Add(-48 * time.Hour)
		if err := s.AppendAudit(ctx, old.Entry); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			e := auditRecord(kanban.ActionTaskCreate, "t2").Entry
			e.Actor, e.ActorKind, e.SessionID = "session:s1", "session", "s1"
			e.At = kanban.Now().Add(time.Duration(i) * time.Millisecond)
			if err := s.AppendAudit(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		all, err := s.ListAudit(ctx, kanban.AuditFilter{Page: kanban.Page{Limit: 2}})
		if err != nil || len(all.Items) != 2 || all.NextCursor == "" || !all.Items[0].At.After(all.Items[1].At) {
			t.Fatalf("first page: got %+v, %v, want 2 entries newest first and a cursor", all, err)
		}
		rest, err := s.ListAudit(ctx, kanban.AuditFilter{Page: kanban.Page{Limit: 2, Cursor: all.NextCursor}})
		if err != nil || len(rest.Items) != 2 || rest.NextCursor != "" || rest.Items[1].ID != old.Entry.ID {
			t.Fatalf("second page: got %+v, %v, want the last 2 ending with the oldest", rest, err)
		}
		bySession, err := s.ListAudit(ctx, kanban.AuditFilter{Actor: "session:s1", Action: kanban.ActionTaskCreate, Since: kanban.Now().Add(-time.Hour)})
		if err != nil || len(bySession.Items) != 3 {
			t.Fatalf("by actor, action and since: got %+v, %v, want 3", bySession, err)
		}
		n, err := s.PruneAudit(ctx, kanban.Now().Add(-24*time.Hour))
		if err != nil || n != 1 || countRows(t, s, "audit_log") != 3 || countRows(t, s, "audit_targets") != 3 {
			t.Errorf("prune: got %d, %v, want the one old entry and its target gone", n, err)
		}
	})
}
