package flow

import (
	"context"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const (
	// heartbeatBatch is how many due heartbeats one read returns;
	// maxHeartbeatBatches bounds one sweep (the rest wait for the next).
	heartbeatBatch      = 500
	maxHeartbeatBatches = 20
)

// heartbeatStamp is the time d's heartbeat is recorded at: the time it
// fell due, so a sweep a moment late does not push the next one an
// interval later; after downtime (an interval or more late), now, so
// missed heartbeats are not made up.
func heartbeatStamp(d kanban.HeartbeatDue, now time.Time) time.Time {
	every := time.Duration(d.Minutes) * time.Minute
	due := d.StepEnteredAt.Add(every)
	if d.LastAt != nil {
		due = d.LastAt.Add(every)
	}
	if now.Sub(due) >= every {
		return now
	}
	return due
}

// Heartbeats fires on_heartbeat for the tasks whose heartbeat is due at
// the engine's clock and says how many fired. Each is claimed first (a
// compare-and-set of the task's last heartbeat), so a heartbeat fires
// once however many backends sweep; its automations then run in the
// task's order, unless the task left the step meanwhile.
func (e *Engine) Heartbeats(ctx context.Context) int {
	now, fired := e.clock(), 0
	for range maxHeartbeatBatches {
		due, err := e.store.DueHeartbeats(ctx, now, heartbeatBatch)
		if err != nil {
			if ctx.Err() == nil {
				e.log.Error("workflow engine: heartbeat sweep", "err", err)
			}
			return fired
		}
		for _, d := range due {
			ok, err := e.store.ClaimHeartbeat(ctx, d, heartbeatStamp(d, now))
			if err != nil {
				if ctx.Err() == nil {
					e.log.Error("workflow engine: heartbeat", "task", d.TaskID, "err", err)
				}
				return fired
			}
			if !ok {
				continue
			}
			fired++
			c := eventCause(kanban.HeartbeatText(d.Minutes))
			e.do(taskKey(d.TaskID), func() {
				t, err := e.store.GetTask(ctx, d.TaskID)
				if err != nil || t.WorkflowStepID != d.StepID || !t.StepEnteredAt.Equal(d.StepEnteredAt) {
					return // moved on (or gone) since it was claimed
				}
				e.run(d.TaskID, d.StepID, kanban.EventHeartbeat, c, nil)
			})
		}
		if len(due) < heartbeatBatch {
			break
		}
	}
	return fired
}
