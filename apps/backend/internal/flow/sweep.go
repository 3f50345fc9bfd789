package flow

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Sweep archives the tasks that stayed on a step longer than its
// auto_archive_after_hours, a batch at a time until none is due or ctx
// ends. A task is archived once: each archive is checked again, in the
// task's own order, right before it runs, and an archived task is never
// due again (after a restart too).
func (e *Engine) Sweep(ctx context.Context) int {
	total := 0
	for ctx.Err() == nil {
		due, err := e.store.DueForArchive(ctx, e.clock(), archiveBatch)
		if err != nil {
			if ctx.Err() == nil {
				e.log.Error("workflow engine: auto-archive sweep", "err", err)
			}
			return total
		}
		var (
			wg sync.WaitGroup
			n  atomic.Int32
		)
		for i := range due {
			t := due[i]
			wg.Add(1)
			queued := e.do(taskKey(t.ID), func() {
				defer wg.Done()
				cur, err := e.store.GetTask(ctx, t.ID)
				if err != nil || cur.ArchivedAt != nil || cur.WorkflowStepID != t.WorkflowStepID || !cur.StepEnteredAt.Equal(t.StepEnteredAt) {
					return // archived, moved or deleted since it was found due
				}
				step, err := e.store.GetStep(ctx, cur.WorkflowStepID)
				if err != nil {
					return
				}
				if _, err := e.svc.ArchiveTask(ctx, cur.ID, "Stopped: the task was archived automatically"); err != nil {
					if ctx.Err() == nil {
						e.log.Error("workflow engine: auto-archive", "task", cur.ID, "err", err)
					}
					return
				}
				n.Add(1)
				e.svc.Record(ctx, cur.ID, "status", fmt.Sprintf("Archived automatically: it stayed on %s longer than %d hours (auto_archive_after_hours).",
					step.Name, step.AutoArchiveAfterHours))
			})
			if !queued {
				wg.Done()
			}
		}
		wg.Wait()
		total += int(n.Load())
		if len(due) < archiveBatch || n.Load() == 0 {
			return total
		}
	}
	return total
}
