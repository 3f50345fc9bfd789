package prwatch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestPolledOnChangeOnly: a poll that records a change of what the pull
// request shows (here its checks) emits PullRequestPolled once; polls
// that find it unchanged (304s) emit nothing.
func TestPolledOnChangeOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bus := &kanban.DomainEvents{}
	var polled atomic.Int32
	bus.React(func(ev kanban.DomainEvent) {
		if p, ok := ev.(kanban.PullRequestPolled); ok && p.PullRequestID == e.pr.ID && p.TaskID == e.task.ID {
			polled.Add(1)
		}
	})
	w, err := New(Config{Store: e.st, Forges: ForgesFunc(func(context.Context, kanban.PullRequest) (forge.Forge, error) { return e.client, nil }),
		Sink: e.sink, Events: bus, Backend: "backend-1", Interval: time.Nanosecond})
	must(t, err)
	e.gh.SetChecks(owner, repoName, sha1, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "success"})
	e.steps(w, 3)
	if n := polled.Load(); n != 1 || e.record().Checks != kanban.ChecksPassing {
		t.Fatalf("after the checks passed: %d events (checks %s), want 1", n, e.record().Checks)
	}
	e.steps(w, 3)
	if n := polled.Load(); n != 1 {
		t.Fatalf("unchanged polls: %d events, want still 1", n)
	}
	e.gh.SetChecks(owner, repoName, sha1, forgetest.CheckRun{Name: "build", Status: "completed", Conclusion: "failure"})
	e.steps(w, 3)
	if n := polled.Load(); n != 2 || e.record().Checks != kanban.ChecksFailing {
		t.Fatalf("after the checks failed: %d events (checks %s), want 2", n, e.record().Checks)
	}
}
