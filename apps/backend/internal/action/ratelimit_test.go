package action

import (
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ratelimit"
)

// A session that floods writes gets RATE_LIMITED answers that say when to
// retry and change nothing (no task row, no audit entry), while the
// operator and another session keep being served.
func TestRateLimitRefusesBeforeAnySideEffect(t *testing.T) {
	h := newHarness(t)
	frozen := time.Unix(1_800_000_000, 0)
	h.reg, _ = mustNew(t, Deps{Store: h.st, Publisher: h.pub, FS: testPolicy(t),
		Limits: ratelimit.New(ratelimit.Config{Calls: ratelimit.Limit{Rate: 100, Burst: 20}, Writes: ratelimit.Limit{Rate: 0.5, Burst: 3},
			Now: func() time.Time { return frozen }})})
	mine, other := h.task("Flooder"), h.task("Bystander")
	flood, calm := h.session(mine, kanban.ModeTask), h.session(other, kanban.ModeTask)
	create := map[string]any{"title": "Spam", "parent_id": "self", "start_agent": false}
	for i := range 3 {
		if _, err := h.do(flood, kanban.ActionTaskCreate, create); err != nil {
			t.Fatalf("write %d within the burst: %v", i, err)
		}
	}
	tasks, audits := h.count("tasks"), h.count("audit_log")
	for range 10 {
		msg := h.refuse(flood, kanban.ActionTaskCreate, create, kanban.CodeRateLimited)
		if msg != "rate limit of writes reached for this caller; retry in 2 s" {
			t.Fatalf("got message %q, want the writes limit and a 2 s retry", msg)
		}
	}
	_, err := h.do(flood, kanban.ActionTaskCreate, create)
	if e, ok := kanban.AsError(err); !ok || e.RetryAfter != 2 {
		t.Errorf("got %v, want RetryAfter 2", err)
	}
	if h.count("tasks") != tasks || h.count("audit_log") != audits {
		t.Errorf("refused writes changed the database: tasks %d→%d, audit %d→%d", tasks, h.count("tasks"), audits, h.count("audit_log"))
	}
	// Reads still go (their own, larger rate); others are unaffected.
	if _, err := h.do(flood, kanban.ActionTaskGet, map[string]any{"id": "self"}); err != nil {
		t.Errorf("the flooder's read: %v, want served", err)
	}
	call[TaskCreateOut](h, calm, kanban.ActionTaskCreate, create)
	call[TaskCreateOut](h, operator, kanban.ActionTaskCreate, map[string]any{"title": "Operator's", "start_agent": false})
}
