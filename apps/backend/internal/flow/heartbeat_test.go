package flow

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// heartbeats counts the on_heartbeat runs recorded on a task.
func (h *harness) heartbeats(taskID string) int {
	n := 0
	for _, r := range h.records(taskID) {
		if strings.Contains(r, "on_heartbeat of Work") {
			n++
		}
	}
	return n
}

// TestHeartbeats: with a clock the test sets, a task on a step with
// heartbeat_minutes 30 gets on_heartbeat 30 minutes after it arrived and
// every 30 minutes after its last one was due (a late sweep does not push
// the next one back); a sweep in between fires nothing;
// after five hours with no sweep it gets one, not ten; two backends
// sweeping at once fire it once; a task on a step with heartbeat_minutes
// but no on_heartbeat automation is not touched; a task that left the
// step and came back starts counting from its arrival.
func TestHeartbeats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := newHarness(t, dir)
	steps := h.workflow(`[{"name":"Work","heartbeat_minutes":30,"events":` + ev("on_heartbeat", `{"type":"set_state","config":{"state":"REVIEW"}}`) +
		`},{"name":"Quiet","heartbeat_minutes":1},{"name":"Elsewhere"}]`)
	work, quiet, other := steps[0], steps[1], steps[2]
	task, silent := h.task("beating", work), h.task("silent", quiet)
	t0 := h.get(task.ID).StepEnteredAt
	ctx := context.Background()
	sweep := func(h *harness, at time.Duration, want int) {
		t.Helper()
		h.setNow(t0.Add(at))
		if n := h.eng.Heartbeats(ctx); n != want {
			t.Fatalf("sweep at +%v fired %d, want %d", at, n, want)
		}
		h.settle()
	}
	sweep(h, 29*time.Minute, 0)
	sweep(h, 31*time.Minute, 1)
	sweep(h, 45*time.Minute, 0)
	sweep(h, 60*time.Minute+time.Second, 1) // on the 30-minute grid, though the last sweep was a minute late
	sweep(h, 6*time.Hour+time.Minute, 1)    // five hours down: one heartbeat
	sweep(h, 6*time.Hour+2*time.Minute, 0)
	if n := h.heartbeats(task.ID); n != 3 {
		t.Fatalf("%d on_heartbeat runs, want 3: %v", n, h.records(task.ID))
	}
	if got := h.get(task.ID).State; got != kanban.TaskReview {
		t.Fatalf("state %s, want REVIEW (set by on_heartbeat)", got)
	}
	if h.heartbeats(silent.ID) != 0 || h.get(silent.ID).State != kanban.TaskTodo {
		t.Fatalf("the step without on_heartbeat automations ran some: %v", h.records(silent.ID))
	}
	sweepTogether(t, h, newHarness(t, dir), t0.Add(6*time.Hour+40*time.Minute))
	// Away and back: counted from the new arrival, not the old heartbeat.
	if err := h.move(task.ID, other.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.move(task.ID, work.ID); err != nil {
		t.Fatal(err)
	}
	back := h.get(task.ID).StepEnteredAt
	h.setNow(back.Add(29 * time.Minute))
	if n := h.eng.Heartbeats(ctx); n != 0 {
		t.Fatalf("fired %d before 30 minutes after the return", n)
	}
	h.setNow(back.Add(31 * time.Minute))
	if n := h.eng.Heartbeats(ctx); n != 1 {
		t.Fatalf("fired %d 31 minutes after the return, want 1", n)
	}
}

// sweepTogether: two backends on one database sweep at the same moment;
// one heartbeat fires in all.
func sweepTogether(t *testing.T, h, h2 *harness, at time.Time) {
	t.Helper()
	h.setNow(at)
	h2.setNow(at)
	var wg sync.WaitGroup
	fired := make([]int, 2)
	for i, x := range []*harness{h, h2} {
		wg.Go(func() { fired[i] = x.eng.Heartbeats(context.Background()) })
	}
	wg.Wait()
	if fired[0]+fired[1] != 1 {
		t.Fatalf("two backends fired %v, want one heartbeat in all", fired)
	}
	h.settle()
	h2.settle()
}
