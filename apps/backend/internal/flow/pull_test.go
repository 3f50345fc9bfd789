package flow

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestPullOnArrival: a step with pull_from_step_id and room pulls a task
// the moment it arrives on the source step — created there or moved
// there — oldest first and up to its wip_limit; the rest wait on the
// source until room frees. Before the fix nothing was pulled until a
// task left the pulling step.
func TestPullOnArrival(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"Backlog"},{"name":"Doing","wip_limit":2,"pull_from_step_position":0},{"name":"Done"}]`)
	backlog, doing, done := steps[0], steps[1], steps[2]
	var tasks []*kanban.Task
	for _, title := range []string{"first", "second", "third"} {
		tasks = append(tasks, h.task(title, backlog))
		time.Sleep(time.Millisecond) // distinct step_entered_at
	}
	for i, want := range []string{doing.ID, doing.ID, backlog.ID} {
		if got := h.get(tasks[i].ID).WorkflowStepID; got != want {
			t.Fatalf("%s: on step %s, want %s; records %v", tasks[i].Title, got, want, h.records(tasks[i].ID))
		}
	}
	if !h.hasRecord(tasks[0].ID, "Admitted to Doing by the step's pull_from_step_id") {
		t.Fatalf("no pull record: %v", h.records(tasks[0].ID))
	}

	// Room frees: the third is pulled (as before).
	if err := h.move(tasks[0].ID, done.ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if got := h.get(tasks[2].ID).WorkflowStepID; got != doing.ID {
		t.Fatalf("third: on %s after room freed, want Doing", got)
	}

	// A task moved back onto the source step while Doing has room is
	// pulled at once.
	if err := h.move(tasks[1].ID, done.ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if err := h.move(tasks[0].ID, backlog.ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if got := h.get(tasks[0].ID).WorkflowStepID; got != doing.ID {
		t.Fatalf("a task moved onto Backlog with room in Doing: on %s, want Doing", got)
	}
}

// TestPullLoopIsCut: two steps that pull from each other, each with room
// for the one task, would pass it back and forth for ever; the engine
// cuts the cascade after MaxChain hops and settles, however the step
// queues interleave (a step told twice per hop — the task left it, a task
// arrived on its source — once made the cascade branch: 128 hops under
// the race detector).
func TestPullLoopIsCut(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	steps := h.workflow(`[{"name":"Start"},{"name":"A","wip_limit":1,"pull_from_step_position":2},{"name":"B","wip_limit":1,"pull_from_step_position":1}]`)
	task := h.task("ping-pong", steps[0])
	if err := h.move(task.ID, steps[1].ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	pulls := 0
	for _, r := range h.records(task.ID) {
		if strings.Contains(r, "by the step's pull_from_step_id") {
			pulls++
		}
	}
	if bound := MaxChain + 1; pulls == 0 || pulls > bound {
		t.Fatalf("%d pulls between A and B, want some and at most %d: %v", pulls, bound, h.records(task.ID))
	}
}
