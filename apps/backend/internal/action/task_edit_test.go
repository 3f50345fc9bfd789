package action

import (
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestTaskUpdateProfiles: task.update replaces and clears the profiles
// kept with a task, which task.get, task.list and the next start read; a
// profile of another workspace is refused and changes nothing.
func TestTaskUpdateProfiles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, _ := h.firstAgent()
	task := h.task("edit me")
	p := call[kanban.AgentProfile](h, operator, kanban.ActionAgentProfileCreate, map[string]any{"agent_id": a.ID, "name": "picked"})
	up := call[kanban.Task](h, operator, kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "agent_profile_id": p.ID, "title": "edited"})
	if up.AgentProfileID != p.ID || up.Title != "edited" {
		t.Fatalf("task.update: got %+v, want the profile and the title", up)
	}
	got := call[kanban.Task](h, operator, kanban.ActionTaskGet, IDIn{ID: task.ID})
	if got.AgentProfileID != p.ID || got.ExecutorProfileID != "" {
		t.Fatalf("task.get: got profiles %q/%q, want %q/none", got.AgentProfileID, got.ExecutorProfileID, p.ID)
	}
	list := call[kanban.List[kanban.TaskSummary]](h, operator, kanban.ActionTaskList, map[string]any{"workflow_id": h.wf})
	if len(list.Items) != 1 || list.Items[0].AgentProfileID != p.ID {
		t.Fatalf("task.list: got %+v, want the kept profile in the summary", list.Items)
	}
	if agent, _, err := h.st.StartProfiles(t.Context(), task.ID); err != nil || agent != p.ID {
		t.Fatalf("start profiles: got %q, %v", agent, err)
	}
	ws, _, _ := h.otherBoard()
	foreign, err := h.st.CreateAgentProfile(t.Context(), kanban.AgentProfile{AgentID: a.ID, Name: "theirs", WorkspaceID: ws.ID})
	if err != nil {
		t.Fatal(err)
	}
	sess := h.session(task, kanban.ModeTask)
	before := h.snapshot()
	h.refuse(operator, kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "agent_profile_id": foreign.ID, "title": "nope"}, kanban.CodeForbidden)
	h.refuse(operator, kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "executor_profile_id": "missing"}, kanban.CodeNotFound)
	// A session, even on its own task, never picks its agents' profiles.
	h.refuse(sess, kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "agent_profile_id": p.ID}, kanban.CodeForbidden)
	h.refuse(sess, kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "executor_profile_id": "", "title": "nope"}, kanban.CodeForbidden)
	h.assertUnchanged(before, "refused profile updates")
	cleared := call[kanban.Task](h, operator, kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "agent_profile_id": ""})
	if cleared.AgentProfileID != "" || h.count("task_start_profiles") != 0 {
		t.Fatalf("clearing: got %q and %d rows, want none", cleared.AgentProfileID, h.count("task_start_profiles"))
	}
}

// TestTaskUnarchive: the operator brings an archived task back, last on
// its step; a full step refuses it; sessions may not unarchive.
func TestTaskUnarchive(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("archived")
	other := h.task("stays")
	call[kanban.Task](h, operator, kanban.ActionTaskArchive, TaskRefIn{TaskID: task.ID})
	sess := h.session(other, kanban.ModeTask)
	h.refuse(sess, kanban.ActionTaskUnarchive, TaskRefIn{TaskID: task.ID}, kanban.CodeForbidden)
	limit := 1
	call[kanban.WorkflowStep](h, operator, kanban.ActionWorkflowStepUpdate, StepUpdateIn{StepID: task.WorkflowStepID, WIPLimit: &limit})
	before := h.snapshot()
	if msg := h.refuse(operator, kanban.ActionTaskUnarchive, TaskRefIn{TaskID: task.ID}, kanban.CodeConflict); msg == "" {
		t.Fatal("a full step: want a reason")
	}
	h.assertUnchanged(before, "unarchive into a full step")
	limit = 0
	call[kanban.WorkflowStep](h, operator, kanban.ActionWorkflowStepUpdate, StepUpdateIn{StepID: task.WorkflowStepID, WIPLimit: &limit})
	back := call[kanban.Task](h, operator, kanban.ActionTaskUnarchive, TaskRefIn{TaskID: task.ID})
	now := call[kanban.Task](h, operator, kanban.ActionTaskGet, IDIn{ID: other.ID})
	if back.ArchivedAt != nil || back.Position != 1 || now.Position != 0 {
		t.Fatalf("unarchived: got archived_at %v, position %d (the other task's %d), want active at 1, last, after 0",
			back.ArchivedAt, back.Position, now.Position)
	}
	if !h.pub.has(WorkspaceTopic(h.ws), kanban.EventTaskUpdated.Name()) {
		t.Fatal("no task.updated event")
	}
	again := call[kanban.Task](h, operator, kanban.ActionTaskUnarchive, TaskRefIn{TaskID: task.ID})
	if again.Position != back.Position {
		t.Fatalf("unarchiving an active task moved it: %d → %d", back.Position, again.Position)
	}
}
