package flow

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestAutoArchiveExactlyOnce: with a clock the test sets, a task that
// stayed on an auto-archive step past its hours is archived once; a second
// sweep and a restarted backend archive nothing again; a task that arrived
// later waits for its own time; a step without auto-archive keeps its tasks.
func TestAutoArchiveExactlyOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := newHarness(t, dir)
	steps := h.workflow(`[{"name":"Open"},{"name":"Done","auto_archive_after_hours":2}]`)
	open, done := steps[0], steps[1]
	early, late, keep := h.task("early", done), h.task("late", done), h.task("stays open", open)
	t0 := time.Now()
	// early arrived three hours ago (the store stamps arrivals with the
	// real time; the test backdates this one).
	if _, err := h.st.DB().Exec(`UPDATE tasks SET step_entered_at = ? WHERE id IN (?, ?)`,
		t0.Add(-3*time.Hour).UTC().Format("2006-01-02T15:04:05.000000Z"), early.ID, keep.ID); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h.setNow(t0)
	if n := h.eng.Sweep(ctx); n != 1 || h.get(early.ID).ArchivedAt == nil || h.get(late.ID).ArchivedAt != nil || h.get(keep.ID).ArchivedAt != nil {
		t.Fatalf("first sweep archived %d", n)
	}
	if n := h.eng.Sweep(ctx); n != 0 {
		t.Fatalf("second sweep archived %d", n)
	}
	h2 := newHarness(t, dir) // a restarted backend on the same database
	h2.setNow(t0)
	if n := h2.eng.Sweep(ctx); n != 0 {
		t.Fatalf("sweep after a restart archived %d", n)
	}
	h2.setNow(t0.Add(2*time.Hour + time.Minute))
	if n := h2.eng.Sweep(ctx); n != 1 || h2.get(late.ID).ArchivedAt == nil || h2.get(keep.ID).ArchivedAt != nil {
		t.Fatalf("late sweep archived %d", n)
	}
	count := 0
	for _, r := range h2.records(early.ID) {
		if strings.Contains(r, "Archived automatically: it stayed on Done longer than 2 hours") {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("early archived %d times: %v", count, h2.records(early.ID))
	}
}
