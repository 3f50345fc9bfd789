package flow

import (
	"context"
	"fmt"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// profiles creates an agent profile of the named agent type and an
// executor profile, and returns their ids.
func (h *harness) profiles(agentName, name string) (string, string) {
	h.t.Helper()
	ctx := context.Background()
	agents, err := h.st.ListAgents(ctx, kanban.Page{Limit: 50})
	if err != nil {
		h.t.Fatal(err)
	}
	var agentID string
	for _, a := range agents.Items {
		if a.Name == agentName {
			agentID = a.ID
		}
	}
	var prof kanban.AgentProfile
	h.must(kanban.ActionAgentProfileCreate, map[string]any{"agent_id": agentID, "name": name}, &prof)
	executors, err := h.st.ListExecutors(ctx, kanban.Page{Limit: 50})
	if err != nil {
		h.t.Fatal(err)
	}
	var execID string
	for _, e := range executors.Items {
		if e.Name == "exec-local" { // a profile with no config of its own
			execID = e.ID
		}
	}
	var exec kanban.ExecutorProfile
	h.must(kanban.ActionExecutorProfileCreate, map[string]any{"executor_id": execID, "name": name}, &exec)
	return prof.ID, exec.ID
}

// onlySession returns the task's one session.
func (h *harness) onlySession(taskID string) kanban.Session {
	h.t.Helper()
	ss := h.sessions(taskID)
	if len(ss) != 1 {
		h.t.Fatalf("task has %d sessions, want 1; records %v", len(ss), h.records(taskID))
	}
	return ss[0]
}

// TestChosenProfilesKeptForLaterStarts: the agent and executor profiles
// named when a task was created without starting its agent are the ones
// every later start uses: a start_agent automation on a step it is moved
// to, start_when_unblocked, and a spawn that names none. Before the fix
// the automation and the spawn launched the default profile (Claude Code).
func TestChosenProfilesKeptForLaterStarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	agent, exec := h.profiles("mock-agent", "chosen")
	steps := h.workflow(`[{"name":"Backlog"},
		{"name":"Work","events":{"on_enter":[{"type":"start_agent"}]}}]`)
	f := false
	create := func(title string, extra func(*action.TaskCreateIn)) *kanban.Task {
		in := action.TaskCreateIn{WorkspaceID: h.ws, WorkflowID: steps[0].WorkflowID, WorkflowStepID: steps[0].ID, Title: title,
			StartAgent: &f, AgentProfileID: agent, ExecutorProfileID: exec}
		if extra != nil {
			extra(&in)
		}
		var out action.TaskCreateOut
		h.must(kanban.ActionTaskCreate, in, &out)
		h.settle()
		if out.SessionID != "" {
			t.Fatalf("%s: an agent started at creation", title)
		}
		return out.Task
	}
	want := func(what string, s kanban.Session) {
		t.Helper()
		if s.AgentProfileID != agent || s.ExecutorProfileID != exec {
			t.Fatalf("%s: session runs profiles %s / %s, want the chosen %s / %s", what, s.AgentProfileID, s.ExecutorProfileID, agent, exec)
		}
	}

	moved := create("Moved later", nil)
	if err := h.move(moved.ID, steps[1].ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	want("start_agent on the step it was moved to", h.onlySession(moved.ID))

	blocker := create("Blocker", func(in *action.TaskCreateIn) { in.AgentProfileID, in.ExecutorProfileID = "", "" })
	waiting := create("Waits for its blocker", func(in *action.TaskCreateIn) { in.StartAgent, in.BlockedBy = nil, []string{blocker.ID} })
	h.must(kanban.ActionTaskSetState, map[string]any{"task_id": blocker.ID, "state": "COMPLETED"}, nil)
	h.settle()
	want("start_when_unblocked", h.onlySession(waiting.ID))

	spawned := create("Spawned by hand", nil)
	h.must(kanban.ActionSessionSpawn, action.SessionSpawnIn{TaskID: spawned.ID}, nil)
	want("a spawn naming no profile", h.onlySession(spawned.ID))
}

// TestLaunchProfilePrecedence: an automation's own profile wins, then the
// step's, then the task's, then the workflow's; a task that named none on
// a workflow that names none gets the default profile.
func TestLaunchProfilePrecedence(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	taskAgent, _ := h.profiles("mock-agent", "task's")
	autoAgent, _ := h.profiles("gemini", "automation's")
	def, err := h.st.DefaultAgentProfile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	plain := h.workflow(fmt.Sprintf(`[{"name":"Backlog"},
		{"name":"Own","events":{"on_enter":[{"type":"start_agent","config":{"agent_profile_id":%q}}]}},
		{"name":"Plain","events":{"on_enter":[{"type":"auto_start_agent"}]}}]`, autoAgent))
	// Step and workflow profiles come from a document (the reference's
	// portable agent_profile, bound to the agent type's default profile).
	var imp action.WorkflowImportOut
	h.must(kanban.ActionWorkflowImport, action.WorkflowImportIn{WorkspaceID: h.ws, Document: `{"version":1,"type":"kandev_workflow",
		"workflows":[{"name":"Profiled","agent_profile":{"agent_name":"opencode"},"steps":[
		{"name":"Backlog","position":0,"is_start_step":true},
		{"name":"Step's","position":1,"agent_profile":{"agent_name":"codex"},"events":{"on_enter":[{"type":"start_agent"}]}},
		{"name":"Plain","position":2,"events":{"on_enter":[{"type":"start_agent"}]}}]}]}`}, &imp)
	profiled := imp.Workflows[0]
	stepAgent, flowAgent := profiled.Steps[1].AgentProfileID, profiled.Workflow.AgentProfileID
	if stepAgent == "" || flowAgent == "" || stepAgent == flowAgent || len(imp.Warnings) > 0 {
		t.Fatalf("imported profiles: step %q, workflow %q, warnings %v", stepAgent, flowAgent, imp.Warnings)
	}
	f := false
	startOn := func(title, agent string, steps []kanban.WorkflowStep, at int) string {
		t.Helper()
		var out action.TaskCreateOut
		h.must(kanban.ActionTaskCreate, action.TaskCreateIn{WorkspaceID: h.ws, WorkflowID: steps[0].WorkflowID, WorkflowStepID: steps[0].ID,
			Title: title, StartAgent: &f, AgentProfileID: agent}, &out)
		h.settle()
		if err := h.move(out.Task.ID, steps[at].ID); err != nil {
			t.Fatal(err)
		}
		h.settle()
		return h.onlySession(out.Task.ID).AgentProfileID
	}
	for _, c := range []struct {
		what, task string
		steps      []kanban.WorkflowStep
		at         int
		want       string
	}{
		{"an automation naming a profile", taskAgent, plain, 1, autoAgent},
		{"the task's choice", taskAgent, plain, 2, taskAgent},
		{"nothing named", "", plain, 2, def.ID},
		{"a step naming a profile", taskAgent, profiled.Steps, 1, stepAgent},
		{"the task's choice over its workflow's", taskAgent, profiled.Steps, 2, taskAgent},
		{"the workflow's when the task named none", "", profiled.Steps, 2, flowAgent},
	} {
		if got := startOn(c.what, c.task, c.steps, c.at); got != c.want {
			t.Errorf("%s: the agent started with profile %s, want %s", c.what, got, c.want)
		}
	}
}

// TestStoppedAgentNotReplaced: an agent's turn moves its task to a step
// that starts agents, but someone stopped that agent meanwhile (the
// engine works behind the runtime): no other agent starts in its place,
// and the record says why. A chain whose own stop_agent stopped the
// agent still replaces it. Before, the seeded board started a default
// agent seconds after the operator stopped one.
func TestStoppedAgentNotReplaced(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"Backlog","events":{"on_turn_start":[{"type":"move_to_next"}]}},
		{"name":"Work","events":{"on_enter":[{"type":"start_agent"}]}},
		{"name":"Fresh","events":{"on_turn_start":[{"type":"move_to_next"}]}},
		{"name":"Replace","events":{"on_enter":[{"type":"stop_agent"},{"type":"start_agent"}]}}]`)
	turn := func(task *kanban.Task, sess *kanban.Session, step kanban.WorkflowStep) {
		h.events.Emit(kanban.TurnEvent{SessionID: sess.ID, TaskID: task.ID, StepID: step.ID, StartedAt: kanban.Now()})
		h.settle()
	}

	stopped := h.task("stopped", steps[0])
	sess := h.managedSession(stopped.ID, kanban.SessionRunning)
	h.must(kanban.ActionTaskStop, action.TaskStopIn{TaskID: stopped.ID}, nil)
	turn(stopped, sess, steps[0])
	if got := h.get(stopped.ID).WorkflowStepID; got != steps[1].ID {
		t.Fatalf("the turn did not move the task to Work: on %s", got)
	}
	if ss := h.sessions(stopped.ID); len(ss) != 1 {
		t.Fatalf("%d sessions after the stop, want the stopped one only; records %v", len(ss), h.records(stopped.ID))
	}
	if !h.hasRecord(stopped.ID, "start_agent: skipped: the agent whose turn led here (session "+sess.ID+") has been stopped") {
		t.Fatalf("no record of the skipped start: %v", h.records(stopped.ID))
	}
	if got := h.get(stopped.ID).State; got != kanban.TaskCancelled {
		t.Fatalf("task state after stopping its working agent: got %s, want CANCELLED", got)
	}

	replaced := h.task("replaced", steps[2])
	old := h.managedSession(replaced.ID, kanban.SessionRunning)
	turn(replaced, old, steps[2])
	ss := h.sessions(replaced.ID)
	if len(ss) != 2 {
		t.Fatalf("%d sessions, want the stopped one and its replacement; records %v", len(ss), h.records(replaced.ID))
	}
	for _, s := range ss {
		if s.ID == old.ID && s.State != kanban.SessionCancelled {
			t.Fatalf("the old agent is %s, want CANCELLED", s.State)
		}
	}
}
