package app

import (
	"context"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// DefaultReportInterval is how often a session's bridge reports the tool
// calls it answered to the backend (session.report_calls), which counts
// them in /metrics (kandev_bridge_tool_calls_total).
const DefaultReportInterval = 10 * time.Second

// reportWait bounds one report, and the last one when the bridge stops.
const reportWait = 5 * time.Second

// callTally counts a bridge's tool calls by tool and outcome between two
// reports. Its keys come from closed sets (the catalog's tool names or
// "upstream", the wrapper's outcomes), so it stays small.
type callTally struct {
	mu     sync.Mutex
	counts map[[2]string]int
}

// observe is the bridge's toolserver.Config.Observe.
func (t *callTally) observe(tool, outcome string, _ time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[[2]string]int{}
	}
	t.counts[[2]string{tool, outcome}]++
}

// take removes and returns one report's worth of counts (at most
// kanban.MaxReportedCalls entries of at most kanban.MaxReportedCallCount
// calls; the rest waits for the next report).
func (t *callTally) take() []action.ReportedCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []action.ReportedCall
	for k, n := range t.counts {
		if len(out) == kanban.MaxReportedCalls {
			break
		}
		c := min(n, kanban.MaxReportedCallCount)
		out = append(out, action.ReportedCall{Tool: k[0], Outcome: k[1], Count: c})
		if n -= c; n == 0 {
			delete(t.counts, k)
		} else {
			t.counts[k] = n
		}
	}
	return out
}

// putBack returns the counts of a report the backend did not take.
func (t *callTally) putBack(calls []action.ReportedCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[[2]string]int{}
	}
	for _, c := range calls {
		t.counts[[2]string{c.Tool, c.Outcome}] += c.Count
	}
}

// reportCalls sends what the tally holds, in as many reports as it
// takes; a report the backend did not answer is put back for the next
// round (a refused one — a bug of ours — is dropped, with a warning).
func (m *SessionMCP) reportCalls(ctx context.Context) {
	for {
		calls := m.tally.take()
		if len(calls) == 0 {
			return
		}
		rctx, cancel := context.WithTimeout(ctx, reportWait)
		err := m.client.Call(rctx, kanban.ActionSessionReportCalls, action.ReportCallsIn{Calls: calls}, nil)
		cancel()
		if err != nil {
			code := kanban.ErrorCode(err)
			if code == kanban.CodeUnavailable || code == kanban.CodeInternal || ctx.Err() != nil {
				m.tally.putBack(calls)
			}
			m.cfg.Logger.Warn("report tool calls", "code", code)
			return
		}
	}
}

// reportLoop reports the tally every interval until ctx ends or Close.
func (m *SessionMCP) reportLoop(ctx context.Context, every time.Duration) {
	defer close(m.reported)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.stop:
			return
		case <-t.C:
			m.reportCalls(ctx)
		}
	}
}
