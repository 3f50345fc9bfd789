package flow

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const (
	// heartbeatBatch is how many due heartbeats one read returns;
	// maxHeartbeatBatches bounds one sweep (the rest wait for the next).
	heartbeatBatch      = 500
	maxHeartbeatBatches = 20
)

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
			ok, err := e.store.ClaimHeartbeat(ctx, d, now)
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
