package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestAgentLoop is the whole loop with the mock agent: create_task over
// MCP starts an agent in the executor's directory; its @tool calls reach
// Kandev through its own session's MCP server (a subtask, a step
// completion); the conversation holds its messages, thought, plan and
// tool calls; session and task states move as documented.
func TestAgentLoop(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	op := e.operatorMCP()
	prompt := strings.Join([]string{
		"Please do the work.",
		"@say Hello from the mock agent, streamed in chunks.",
		"@think Considering the task",
		"@plan Read the code | Write the fix",
		`@tool create_task_kandev {"title":"Subtask from mock","parent_id":"self","start_agent":false}`,
		`@tool step_complete_kandev {"summary":"Done by the mock"}`,
		"@say All done.",
	}, "\n")
	var created action.TaskCreateOut
	e.decode(e.call(op, "create_task_kandev", mustJSON(t, map[string]any{"title": "Loop task", "prompt": prompt,
		"agent_profile_id": e.profileOf("mock-agent").ID})), &created)
	if created.SessionID == "" {
		t.Fatal("no session started")
	}
	sess := e.waitState(created.SessionID, kanban.SessionIdle)
	e.waitTask(created.Task.ID, kanban.TaskReview)

	want := filepath.Join(e.cfg.DataDir, "tasks", created.Task.ID)
	if abs, _ := filepath.Abs(want); sess.Workdir != abs {
		t.Fatalf("workdir %q, want %q", sess.Workdir, abs)
	}
	if st, err := os.Stat(sess.Workdir); err != nil || !st.IsDir() {
		t.Fatalf("workdir missing: %v", err)
	}
	if !sess.Managed || sess.AgentSessionID == "" || sess.StartedAt == nil {
		t.Fatalf("session run fields not recorded: %+v", sess)
	}
	msg := e.waitMessage(created.Task.ID, "message", "Hello from the mock agent, streamed in chunks.")
	if msg.Author != "agent" || msg.Turn != 1 {
		t.Fatalf("agent message %+v", msg)
	}
	e.waitMessage(created.Task.ID, "thought", "Considering the task")
	e.waitMessage(created.Task.ID, "plan", "Write the fix")
	e.waitMessage(created.Task.ID, "message", "All done.")
	var call struct{ Title, Status, Input, Output string }
	tc := e.waitMessage(created.Task.ID, "tool_call", "create_task_kandev")
	if err := json.Unmarshal([]byte(tc.Content), &call); err != nil || call.Status != "completed" || !strings.Contains(call.Output, "Subtask from mock") {
		t.Fatalf("tool call record %s (err %v)", tc.Content, err)
	}
	var subs kanban.List[kanban.Task]
	e.dispatch(kanban.ActionTaskList, action.TaskListIn{ParentID: created.Task.ID}, &subs)
	if len(subs.Items) != 1 || subs.Items[0].Title != "Subtask from mock" {
		t.Fatalf("subtasks %+v", subs.Items)
	}
	e.waitMessage(created.Task.ID, "tool_call", "step_complete_kandev")
	var signals kanban.List[kanban.Artifact]
	e.dispatch(kanban.ActionArtifactList, action.ArtifactListIn{TaskID: created.Task.ID, Kind: kanban.ArtifactStepComplete}, &signals)
	if len(signals.Items) != 1 || signals.Items[0].SessionID != created.SessionID {
		t.Fatalf("step completion signals %+v", signals.Items)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
