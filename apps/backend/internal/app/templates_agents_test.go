package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// fromTemplate creates a workflow from a built-in template as the board's
// gallery does (workflow.import with its template_id) and returns its
// steps by name.
func (e *env) fromTemplate(id, name string) (string, map[string]kanban.WorkflowStep) {
	e.t.Helper()
	var out action.WorkflowImportOut
	e.dispatch(kanban.ActionWorkflowImport, action.WorkflowImportIn{TemplateID: id, Name: name}, &out)
	if len(out.Workflows) != 1 {
		e.t.Fatalf("template %s: got %+v, want one workflow created", id, out)
	}
	steps := map[string]kanban.WorkflowStep{}
	for _, st := range out.Workflows[0].Steps {
		steps[st.Name] = st
	}
	return out.Workflows[0].Workflow.ID, steps
}

// mockTask creates a task with the mock agent's profile on a workflow's
// start step, starting its agent as the board's New task form does.
func (e *env) mockTask(workflowID, title, prompt string) *kanban.Task {
	e.t.Helper()
	var out action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: title, Prompt: prompt, WorkflowID: workflowID,
		AgentProfileID: e.profileOf("mock-agent").ID}, &out)
	return out.Task
}

// waitStep waits until the task is on step and the workflow engine has
// nothing left to do.
func (e *env) waitStep(taskID string, step kanban.WorkflowStep) {
	e.t.Helper()
	waitFor(e.t, func() bool { return stepOf(e, taskID) == step.ID })
	e.settleFlow()
}

// noRecord fails when the task's conversation has a workflow record
// containing what.
func (e *env) noRecord(taskID, what string) {
	e.t.Helper()
	if e.count(taskID, "status", what) > 0 {
		e.t.Fatalf("the workflow recorded %q:%s", what, dumpConversation(e.conversation(taskID)))
	}
}

// TestTemplateKanbanMovesByItself: on the Kanban template, a task whose
// mock agent starts goes Backlog → In Progress → Review by itself; a
// message to its agent in Review takes it back to In Progress and on to
// Review; Done completes it.
func TestTemplateKanbanMovesByItself(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	wf, steps := e.fromTemplate("kanban", "Kanban from the gallery")
	task := e.mockTask(wf, "Greet", "@say Hello from the Kanban template.")
	if task.WorkflowStepID != steps["Backlog"].ID {
		t.Fatalf("created on %s, want Backlog", task.WorkflowStepID)
	}
	e.waitMessage(task.ID, "status", "on_turn_start of Backlog, move_to_next: moved to In Progress")
	e.waitMessage(task.ID, "status", "on_turn_complete of In Progress, move_to_step: moved to Review")
	e.waitStep(task.ID, steps["Review"])
	e.waitTask(task.ID, kanban.TaskReview)

	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@say Once more."}, nil)
	e.waitMessage(task.ID, "status", "on_turn_start of Review, move_to_previous: moved to In Progress")
	e.waitMessage(task.ID, "message", "Once more.")
	waitFor(t, func() bool { return e.count(task.ID, "status", "move_to_step: moved to Review") == 2 })
	e.waitStep(task.ID, steps["Review"])

	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: steps["Done"].ID}, nil)
	e.waitTask(task.ID, kanban.TaskCompleted)
}

// TestTemplatePlanAndBuild: on Plan & Build, a new task's mock agent
// starts on Plan in plan mode and the task stays there for the operator;
// moved to Build, plan mode ends, the same agent gets the Build prompt
// (with the task's prompt in it) and the task goes to Review when its
// turn ends.
func TestTemplatePlanAndBuild(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	wf, steps := e.fromTemplate("plan-and-build", "")
	task := e.mockTask(wf, "Greeting", "Add a greeting.\n@mode\n@prompt")
	if task.WorkflowStepID != steps["Plan"].ID {
		t.Fatalf("created on %s, want Plan (the start step)", task.WorkflowStepID)
	}
	e.waitMessage(task.ID, "status", "enable_plan_mode: plan mode on")
	e.waitMessage(task.ID, "message", "mode: plan")
	e.waitMessage(task.ID, "message", "1: <kandev-system>PLAN MODE ACTIVE:")
	e.waitMessage(task.ID, "prompt", "Planning step: work out how to do the task below")
	sid := e.sessionOf(task.ID)
	e.waitState(sid, kanban.SessionIdle)
	e.settleFlow()
	if got := stepOf(e, task.ID); got != steps["Plan"].ID {
		t.Fatalf("after the planning turn the task is on %s, want it to stay on Plan", got)
	}

	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: steps["Build"].ID}, nil)
	e.waitMessage(task.ID, "status", "on_exit of Plan, disable_plan_mode")
	e.waitMessage(task.ID, "message", "mode: default")
	e.waitMessage(task.ID, "prompt", "Build step: the plan is approved; implement it.\n\nAdd a greeting.")
	e.waitMessage(task.ID, "status", "on_turn_complete of Build, move_to_next: moved to Review")
	e.waitStep(task.ID, steps["Review"])
	if got := e.sessionOf(task.ID); got != sid {
		t.Fatalf("Build ran in session %s, want the planning agent's %s", got, sid)
	}
	e.noRecord(task.ID, "moved to Build")
	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: steps["Done"].ID}, nil)
	e.waitTask(task.ID, kanban.TaskCompleted)
}

// TestTemplateFeatureDev: on Feature Dev, a new task's mock agent writes
// the spec in plan mode and the task waits on Spec even though the agent
// signals the step complete; moved to Work, each phase passes to the next
// on the agent's step_complete_kandev at the end of its turn — Work →
// Review (in a fresh ACP session) → QA → PR → CI Fix, where it stays
// until its pull request is merged: then it is Done.
func TestTemplateFeatureDev(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	wf, steps := e.fromTemplate("feature-dev", "")
	task := e.mockTask(wf, "Search", "Add search.\n@mode\n@session\n"+`@tool step_complete_kandev {"summary": "phase done"}`)
	if task.WorkflowStepID != steps["Spec"].ID {
		t.Fatalf("created on %s, want Spec (the start step)", task.WorkflowStepID)
	}
	e.waitMessage(task.ID, "message", "mode: plan")
	e.waitMessage(task.ID, "tool_call", "the step does not auto-advance")
	sid := e.sessionOf(task.ID)
	e.waitState(sid, kanban.SessionIdle)
	e.settleFlow()
	if got := stepOf(e, task.ID); got != steps["Spec"].ID {
		t.Fatalf("after the spec turn the task is on %s, want it to wait on Spec for the operator", got)
	}

	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: steps["Work"].ID}, nil)
	for _, next := range []string{"Review", "QA", "PR", "CI Fix"} {
		e.waitMessage(task.ID, "status", "auto_advance: moved to "+next)
	}
	e.waitStep(task.ID, steps["CI Fix"])
	e.waitMessage(task.ID, "prompt", "CI Fix step: get the pull request's checks green.")
	e.waitState(sid, kanban.SessionIdle)
	e.settleFlow()
	if got := stepOf(e, task.ID); got != steps["CI Fix"].ID {
		t.Fatalf("the task left CI Fix for %s; CI Fix waits for the operator", got)
	}
	e.noRecord(task.ID, "moved to Work")
	e.noRecord(task.ID, "moved to Done")
	e.waitMessage(task.ID, "status", "reset_agent_context: the agent runs in a fresh session")
	// Spec, Work: prompts 1 and 2 of the first ACP session; Review (a
	// fresh context): prompt 1 of another; QA, PR, CI Fix: 2, 3, 4 of it.
	var sessions []string
	for _, m := range e.conversation(task.ID) {
		if _, after, ok := strings.Cut(m.Content, "session: "); ok && m.Type == "message" {
			sessions = append(sessions, strings.TrimSpace(after))
		}
	}
	if len(sessions) != 6 || !strings.HasSuffix(sessions[2], "prompt 1") || strings.HasPrefix(sessions[2], strings.Split(sessions[0], ",")[0]+",") {
		t.Fatalf("ACP sessions of the six turns: %q; want Review's turn to be the first prompt of a fresh session", sessions)
	}
	if n := e.count(task.ID, "message", "mode: default"); n != 5 {
		t.Fatalf("%d turns out of plan mode, want the five after Spec:%s", n, dumpConversation(e.conversation(task.ID)))
	}
	// The merge of the task's pull request (as the watcher reports it)
	// moves it from CI Fix to Done, which completes it.
	e.b.events.Emit(kanban.PullRequestMerged{TaskID: task.ID, PullRequestID: kanban.NewID()})
	e.waitMessage(task.ID, "status", "on_pr_merged of CI Fix, move_to_step: moved to Done")
	e.waitStep(task.ID, steps["Done"])
	e.waitTask(task.ID, kanban.TaskCompleted)
}

// TestTemplatePRReview: on PR Review, a new task's agent reviews at once
// (the Review prompt with the pull request in it) and the task is Done,
// completed, when its turn ends; a follow-up message takes it back to
// Review and on to Done.
func TestTemplatePRReview(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	wf, steps := e.fromTemplate("pr-review", "")
	task := e.mockTask(wf, "Review #7", "https://github.com/octo/demo/pull/7\n@say Reviewed.")
	e.waitMessage(task.ID, "prompt", "Review step: review the pull request named below, and change nothing.\n\nhttps://github.com/octo/demo/pull/7")
	e.waitMessage(task.ID, "status", "on_turn_complete of Review, move_to_next: moved to Done")
	e.waitStep(task.ID, steps["Done"])
	e.waitTask(task.ID, kanban.TaskCompleted)
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@say And the tests?"}, nil)
	e.waitMessage(task.ID, "status", "on_turn_start of Done, move_to_previous: moved to Review")
	waitFor(t, func() bool { return e.count(task.ID, "status", "move_to_next: moved to Done") == 2 })
	e.waitStep(task.ID, steps["Done"])
}

// TestTemplateArchitecture: on Architecture, a new task's agent designs
// in plan mode and the task goes to Review when its turn ends; a comment
// sends it back to Design, still in plan mode; Approved ends plan mode and
// completes the task.
func TestTemplateArchitecture(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	wf, steps := e.fromTemplate("architecture", "")
	task := e.mockTask(wf, "Caching", "Design a cache.\n@mode")
	e.waitMessage(task.ID, "status", "on_turn_complete of Design, move_to_next: moved to Review")
	e.waitStep(task.ID, steps["Review"])
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "Consider eviction.\n@mode"}, nil)
	e.waitMessage(task.ID, "status", "on_turn_start of Review, move_to_previous: moved to Design")
	waitFor(t, func() bool { return e.count(task.ID, "status", "moved to Review") == 2 })
	e.waitStep(task.ID, steps["Review"])
	if n := e.count(task.ID, "message", "mode: plan"); n != 2 {
		t.Fatalf("%d design turns in plan mode, want 2:%s", n, dumpConversation(e.conversation(task.ID)))
	}
	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: task.ID, WorkflowStepID: steps["Approved"].ID}, nil)
	e.waitMessage(task.ID, "status", "on_enter of Approved, disable_plan_mode")
	e.waitTask(task.ID, kanban.TaskCompleted)
}

// TestTemplateRoutine: on Routine, a task created without starting an
// agent gets one at once on Run (with the profile chosen for it); when the
// turn ends the task is Done: its agent stopped and the task completed.
func TestTemplateRoutine(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	wf, steps := e.fromTemplate("routine", "")
	f := false
	var out action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: "Nightly", Prompt: "@say Ran the nightly job.", WorkflowID: wf,
		AgentProfileID: e.profileOf("mock-agent").ID, StartAgent: &f}, &out)
	e.waitMessage(out.Task.ID, "message", "Ran the nightly job.")
	e.waitMessage(out.Task.ID, "status", "on_enter of Done, stop_agent: stopped 1 session(s)")
	e.waitStep(out.Task.ID, steps["Done"])
	e.waitTask(out.Task.ID, kanban.TaskCompleted)
	if s := e.session(e.sessionOf(out.Task.ID)); !s.State.Ended() {
		t.Fatalf("the routine's agent is %s after Done, want it stopped", s.State)
	}
	if got := dbStr(e, `SELECT auto_archive_after_hours FROM workflow_steps WHERE id = ?`, steps["Done"].ID); got != fmt.Sprint(168) {
		t.Fatalf("Done archives after %s hours, want a week", got)
	}
}
