package app

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestRoutineCreatesTask: a minute routine created over the WebSocket
// API, on a backend whose clock is moved to just past the routine's
// next run, creates its task once; the mock agent runs the task's
// prompt; routine.runs says so and the routine names its last task.
func TestRoutineCreatesTask(t *testing.T) {
	t.Parallel()
	var shift atomic.Int64
	e := newAgentEnv(t, func(c *Config) {
		c.RoutineTick = 100 * time.Millisecond
		c.Clock = shifted(&shift)
	})
	c := e.wsClient(e.token, nil)
	ctx := context.Background()
	var r kanban.Routine
	if err := c.Call(ctx, kanban.ActionRoutineCreate, map[string]any{"workspace_id": e.workspaceID(), "name": "Minutely",
		"schedule": "* * * * *", "target": "create_task", "title": "Routine task", "prompt": "@say the routine ran",
		"agent_profile_id": e.profileOf("mock-agent").ID}, &r); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, kanban.ActionRoutineCreate, map[string]any{"workspace_id": e.workspaceID(), "name": "Bad",
		"schedule": "@every 1m", "target": "create_task", "title": "T"}, nil); kanban.ErrorCode(err) != kanban.CodeValidation ||
		!strings.Contains(err.Error(), "@every is not supported") {
		t.Fatalf("@every: %v", err)
	}
	shift.Store(int64(time.Until(r.NextRunAt) + 500*time.Millisecond))
	var runs kanban.List[kanban.RoutineRun]
	deadline := time.Now().Add(agentWait)
	for time.Now().Before(deadline) {
		if err := c.Call(ctx, kanban.ActionRoutineRuns, map[string]any{"id": r.ID}, &runs); err != nil {
			t.Fatal(err)
		}
		if len(runs.Items) > 0 && runs.Items[0].Outcome != kanban.RunStarted {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(runs.Items) != 1 || runs.Items[0].Outcome != kanban.RunCreated || !runs.Items[0].ScheduledFor.Equal(r.NextRunAt) {
		t.Fatalf("runs = %+v", runs.Items)
	}
	taskID := runs.Items[0].TaskID
	e.waitMessage(taskID, "message", "the routine ran")
	var got kanban.Routine
	if err := c.Call(ctx, kanban.ActionRoutineGet, map[string]any{"id": r.ID}, &got); err != nil {
		t.Fatal(err)
	}
	if got.LastTaskID != taskID || !got.NextRunAt.Equal(r.NextRunAt.Add(time.Minute)) || got.LastRunAt == nil {
		t.Fatalf("routine after its run = %+v", got)
	}
	var task kanban.Task
	e.dispatch(kanban.ActionTaskGet, map[string]any{"id": taskID}, &task)
	if task.Title != "Routine task" || !strings.HasPrefix(task.ExternalID, "routine:"+r.ID+":") {
		t.Fatalf("task = %+v", task)
	}
}

// TestHeartbeatWakesAgent: a step with heartbeat_minutes 1 whose
// on_heartbeat queues a run; once the backend's clock is a minute past
// the task's arrival, the mock agent gets the heartbeat as its next turn,
// told why, and only once while the clock stays there.
func TestHeartbeatWakesAgent(t *testing.T) {
	t.Parallel()
	var shift atomic.Int64
	e := newAgentEnv(t, func(c *Config) {
		c.ArchiveSweep = 100 * time.Millisecond
		c.Clock = shifted(&shift)
	})
	var wf action.WorkflowOut
	e.decode(e.call(e.operatorMCP(), "create_workflow_kandev", mustJSON(t, map[string]any{"name": "Beating", "steps": []any{
		map[string]any{"name": "Work", "heartbeat_minutes": 1, "events": map[string]any{
			"on_heartbeat": []any{map[string]any{"type": "queue_run", "config": map[string]any{"reason": "@say still on it"}}},
		}},
	}})), &wf)
	if len(wf.Steps) != 1 || wf.Steps[0].HeartbeatMinutes != 1 {
		t.Fatalf("workflow %+v", wf)
	}
	task, sid := e.startMock("Long task", "@say started", map[string]any{"workflow_id": wf.Workflow.ID})
	e.waitMessage(task.ID, "message", "started")
	e.waitState(sid, kanban.SessionIdle)
	shift.Store(int64(61 * time.Second))
	e.waitMessage(task.ID, "message", "still on it")
	e.waitMessage(task.ID, "status", "on_heartbeat of Work, queue_run")
	e.waitState(sid, kanban.SessionIdle)
	time.Sleep(500 * time.Millisecond) // five more sweeps at the same time
	if n := e.count(task.ID, "status", "on_heartbeat of Work"); n != 1 {
		t.Fatalf("on_heartbeat ran %d times, want once: %s", n, dumpConversation(e.conversation(task.ID)))
	}
	if n := e.count(task.ID, "prompt", kanban.HeartbeatText(1)); n != 1 {
		t.Fatalf("%d heartbeat prompts, want 1: %s", n, dumpConversation(e.conversation(task.ID)))
	}
}

// shifted is a clock shift ahead of the real one (shift set while the
// backend runs).
func shifted(shift *atomic.Int64) func() time.Time {
	return func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
}
