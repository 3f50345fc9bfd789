package store

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestAgentMode: a task starts in the zero mode; updates change only the
// fields they name; a reset request is taken once, by its session only;
// the mode survives reopening the database and goes with its task.
func TestAgentMode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	b := newBoard(t, s, "modes")
	task := mustTask(t, s, b, "", "planned")
	m, err := s.AgentMode(ctx, task.ID)
	if err != nil || *m != (kanban.AgentMode{TaskID: task.ID}) {
		t.Fatalf("new task's mode %+v, %v", m, err)
	}
	if _, err := s.AgentMode(ctx, "missing"); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Fatalf("missing task: got %v, want NOT_FOUND", err)
	}
	if _, _, err := s.UpdateAgentMode(ctx, "missing", kanban.AgentModeUpdate{}); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Fatalf("update of a missing task: got %v, want NOT_FOUND", err)
	}
	if n := countRows(t, s, "task_agent_modes"); n != 0 {
		t.Fatalf("a refused update wrote %d rows", n)
	}

	on, mode, sess := true, "acceptEdits", "sess-1"
	before, after, err := s.UpdateAgentMode(ctx, task.ID, kanban.AgentModeUpdate{PlanMode: &on, ResetSessionID: &sess})
	if err != nil || before.PlanMode || !after.PlanMode || after.ResetSessionID != sess || after.SessionMode != "" {
		t.Fatalf("enable: before %+v after %+v, %v", before, after, err)
	}
	if _, after, err = s.UpdateAgentMode(ctx, task.ID, kanban.AgentModeUpdate{SessionMode: &mode}); err != nil ||
		!after.PlanMode || after.SessionMode != mode || after.ResetSessionID != sess {
		t.Fatalf("set mode kept the others? %+v, %v", after, err)
	}
	if taken, err := s.TakeReset(ctx, task.ID, "sess-2"); err != nil || taken {
		t.Fatalf("another session took the reset: %v %v", taken, err)
	}
	if taken, err := s.TakeReset(ctx, task.ID, sess); err != nil || !taken {
		t.Fatalf("the session did not take its reset: %v %v", taken, err)
	}
	if taken, err := s.TakeReset(ctx, task.ID, sess); err != nil || taken {
		t.Fatalf("a reset was taken twice: %v %v", taken, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = newReopened(t, dir)
	want := kanban.AgentMode{TaskID: task.ID, PlanMode: true, SessionMode: mode}
	if m, err := s.AgentMode(ctx, task.ID); err != nil || m.UpdatedAt.IsZero() || (kanban.AgentMode{TaskID: m.TaskID, PlanMode: m.PlanMode,
		SessionMode: m.SessionMode, ResetSessionID: m.ResetSessionID}) != want {
		t.Fatalf("after reopening: got %+v, %v, want %+v", m, err, want)
	}
	if err := s.DeleteTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "task_agent_modes"); n != 0 {
		t.Fatalf("%d agent modes outlived their task", n)
	}
}

func newReopened(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
