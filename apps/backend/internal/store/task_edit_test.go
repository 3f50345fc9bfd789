package store

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestUpdateTaskProfiles: UpdateTask replaces, keeps and clears the
// profiles kept with a task, which every read of the task carries.
func TestUpdateTaskProfiles(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s := newTestStore(t)
		ctx := context.Background()
		if err := action.Seed(ctx, s); err != nil {
			t.Fatal(err)
		}
		b := newBoard(t, s, "Edit")
		def := must(s.DefaultAgentProfile(ctx))(t)
		exec := must(s.DefaultExecutorProfile(ctx))(t)
		task := mustTask(t, s, b, "", "plain")
		agent := def.ID
		up := must(s.UpdateTask(ctx, task.ID, kanban.TaskUpdate{AgentProfileID: &agent}))(t)
		if up.AgentProfileID != def.ID || up.ExecutorProfileID != "" {
			t.Fatalf("set the agent profile: got %q/%q", up.AgentProfileID, up.ExecutorProfileID)
		}
		executor := exec.ID
		up = must(s.UpdateTask(ctx, task.ID, kanban.TaskUpdate{ExecutorProfileID: &executor}))(t)
		got := must(s.GetTask(ctx, task.ID))(t)
		if up.AgentProfileID != def.ID || got.AgentProfileID != def.ID || got.ExecutorProfileID != exec.ID {
			t.Fatalf("then the executor profile: got %+v and read %+v, want both kept", up, got)
		}
		listed := collectTasks(t, s, kanban.TaskFilter{WorkspaceID: b.ws.ID}, 10)
		if len(listed) != 1 || listed[0].AgentProfileID != def.ID || listed[0].ExecutorProfileID != exec.ID {
			t.Fatalf("listed: got %+v", listed)
		}
		none := ""
		must(s.UpdateTask(ctx, task.ID, kanban.TaskUpdate{AgentProfileID: &none, ExecutorProfileID: &none}))(t)
		if n := countRows(t, s, "task_start_profiles"); n != 0 {
			t.Fatalf("cleared: %d rows left", n)
		}
	})
}

// TestUnarchiveTask: an archived task comes back last on its step (its
// position is its rank there: 1 of tasks 0..1); a full
// step refuses it and nothing changes; an active task is left as it is.
func TestUnarchiveTask(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s := newTestStore(t)
		ctx := context.Background()
		b := newBoard(t, s, "Unarchive")
		task := mustTask(t, s, b, "", "archived")
		mustTask(t, s, b, "", "second")
		must(s.ArchiveTask(ctx, task.ID))(t)
		limit := 1
		must(s.UpdateStep(ctx, b.steps[0].ID, kanban.StepUpdate{WIPLimit: &limit}))(t)
		if _, err := s.UnarchiveTask(ctx, task.ID); kanban.ErrorCode(err) != kanban.CodeConflict {
			t.Fatalf("into a full step: got %v, want CONFLICT", err)
		}
		if got := must(s.GetTask(ctx, task.ID))(t); got.ArchivedAt == nil {
			t.Fatal("a refused unarchive changed the task")
		}
		limit = 0
		must(s.UpdateStep(ctx, b.steps[0].ID, kanban.StepUpdate{WIPLimit: &limit}))(t)
		back := must(s.UnarchiveTask(ctx, task.ID))(t)
		if back.ArchivedAt != nil || back.Position != 1 {
			t.Fatalf("unarchived: got archived_at %v at %d, want active at 1 (last)", back.ArchivedAt, back.Position)
		}
		checkDense(t, s, b.steps[0].ID)
		if again := must(s.UnarchiveTask(ctx, task.ID))(t); again.Position != back.Position || !again.UpdatedAt.Equal(back.UpdatedAt) {
			t.Fatalf("an active task: got %+v, want it unchanged", again)
		}
	})
}
