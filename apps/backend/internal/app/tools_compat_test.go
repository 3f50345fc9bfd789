package app

import (
	"fmt"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestMoveTaskAcrossWorkflows: move_task_kandev with workflow_id moves a
// task to a step of another workflow of its workspace; prompt hands off
// to the agent (queued to a live session, else the next launch prompt);
// a step outside workflow_id or a workflow of another workspace is refused
// with nothing changed.
func TestMoveTaskAcrossWorkflows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	task := e.newTask("Traveller")
	home := boardSteps(e, task.ID)
	var other action.WorkflowOut
	callJSON(e, c, "create_workflow_kandev", `{"name":"Other","steps":[{"name":"Inbox"},{"name":"Triage"}]}`, &other)

	var moved kanban.Task
	callJSON(e, c, "move_task_kandev", fmt.Sprintf(`{"task_id":%q,"workflow_id":%q,"workflow_step_id":%q,"prompt":"Pick up from review"}`,
		task.ID, other.Workflow.ID, other.Steps[1].ID), &moved)
	row := dbStr(e, `SELECT workflow_id || '|' || workflow_step_id || '|' || launch_prompt FROM tasks WHERE id = ?`, task.ID)
	if want := other.Workflow.ID + "|" + other.Steps[1].ID + "|Pick up from review"; row != want || moved.WorkflowID != other.Workflow.ID {
		t.Fatalf("moved across: got row %q, want %q (the hand-off kept as the launch prompt)", row, want)
	}

	refused(e, c, "move_task_kandev", fmt.Sprintf(`{"task_id":%q,"workflow_id":%q,"workflow_step_id":%q}`, task.ID, task.WorkflowID, other.Steps[0].ID),
		"VALIDATION_ERROR: workflow_step_id: must be a step of workflow_id")
	refused(e, c, "move_task_kandev", fmt.Sprintf(`{"task_id":%q,"workflow_step_id":%q}`, task.ID, home[0].ID),
		"VALIDATION_ERROR: workflow_step_id: must be a step of the task's workflow")
	foreign := foreignTask(e)
	refused(e, c, "move_task_kandev", fmt.Sprintf(`{"task_id":%q,"workflow_id":%q,"workflow_step_id":%q}`, task.ID, foreign.WorkflowID, foreign.WorkflowStepID),
		"VALIDATION_ERROR: workflow_id: must be a workflow of the task's workspace")

	sid := bareSession(e, task.ID)
	callJSON(e, c, "move_task_kandev", fmt.Sprintf(`{"task_id":%q,"workflow_id":%q,"workflow_step_id":%q,"prompt":"Back to you"}`,
		task.ID, task.WorkflowID, home[1].ID), &moved)
	if moved.WorkflowID != task.WorkflowID || moved.WorkflowStepID != home[1].ID {
		t.Fatalf("moved back: got %s/%s, want %s/%s", moved.WorkflowID, moved.WorkflowStepID, task.WorkflowID, home[1].ID)
	}
	if n := dbInt(e, `SELECT COUNT(*) FROM session_messages WHERE session_id = ? AND type = 'prompt' AND content = 'Back to you'`, sid); n != 1 {
		t.Fatalf("hand-off to the live session: got %d prompts, want 1", n)
	}
	if lp := dbStr(e, `SELECT launch_prompt FROM tasks WHERE id = ?`, task.ID); lp != "" {
		t.Fatalf("the older hand-off kept for a next session: got %q, want it superseded by the delivered one", lp)
	}
}

// TestStepInsertAndReferenceSettings: create_workflow_step_kandev's
// position inserts the step there (later steps shift right), and
// cancel_triggers_turn_complete and show_in_command_panel are stored and
// returned.
func TestStepInsertAndReferenceSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	var wf action.WorkflowOut
	callJSON(e, c, "create_workflow_kandev", `{"name":"Insert","steps":[{"name":"A"},{"name":"B"}]}`, &wf)
	var st kanban.WorkflowStep
	callJSON(e, c, "create_workflow_step_kandev", fmt.Sprintf(`{"workflow_id":%q,"name":"Between","position":1,"show_in_command_panel":true}`, wf.Workflow.ID), &st)
	got := dbStr(e, `SELECT group_concat(name, ',') FROM (SELECT name FROM workflow_steps WHERE workflow_id = ? ORDER BY position)`, wf.Workflow.ID)
	if got != "A,Between,B" || st.Position != 1 || !st.ShowInCommandPanel {
		t.Fatalf("insert at 1: got order %s, step %+v; want A,Between,B with the panel flag", got, st)
	}
	callJSON(e, c, "create_workflow_step_kandev", fmt.Sprintf(`{"workflow_id":%q,"name":"Last","position":40}`, wf.Workflow.ID), &st)
	if st.Position != 3 {
		t.Fatalf("position past the end: got %d, want 3 (last)", st.Position)
	}
	callJSON(e, c, "update_workflow_step_kandev", fmt.Sprintf(`{"step_id":%q,"cancel_triggers_turn_complete":true}`, wf.Steps[0].ID), &st)
	row := dbStr(e, `SELECT cancel_triggers_turn_complete || '|' || show_in_command_panel FROM workflow_steps WHERE id = ?`, wf.Steps[0].ID)
	if row != "1|0" || !st.CancelTriggersTurnComplete || st.ShowInCommandPanel {
		t.Fatalf("step settings: got row %q, step %+v; want cancel_triggers_turn_complete only", row, st)
	}
}
