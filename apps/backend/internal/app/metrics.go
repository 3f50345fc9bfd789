package app

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/metrics"
)

// newMetrics is the backend's registry with its gauges and counters read
// from the parts that keep them: the store, the WebSocket server and the
// agent runtime (read at each scrape, so they never drift from what those
// parts report). Called once the parts exist.
func (b *backend) newMetrics() {
	m := b.metrics
	writes := m.Histogram("kandev_store_write_transaction_duration_seconds")
	b.store.ObserveWrites(func(d time.Duration) { writes.Observe(d.Seconds()) })
	m.CounterFunc("kandev_store_commits_total", func() float64 { c, _ := b.store.WriteStats(); return float64(c) })
	m.CounterFunc("kandev_store_writes_total", func() float64 { _, w := b.store.WriteStats(); return float64(w) })
	m.CounterFunc("kandev_store_transaction_retries_total", func() float64 { return float64(b.store.TxRetries()) })
	if bus := b.shared.bus; bus != nil {
		lag := m.Histogram("kandev_cluster_event_lag_seconds")
		bus.ObserveLag(func(d time.Duration) { lag.Observe(d.Seconds()) })
		m.CounterFunc("kandev_cluster_events_dropped_total", func() float64 { return float64(bus.Dropped()) })
		lease := b.shared.members
		m.GaugeFunc("kandev_cluster_lease_age_seconds", func() float64 {
			age, ok := lease.LeaseAge()
			if !ok {
				return math.NaN() // not renewed yet: no age, no alert
			}
			return age.Seconds()
		})
		m.GaugeFunc("kandev_cluster_lease_ttl_seconds", func() float64 { return lease.TTL().Seconds() })
		m.CounterFunc("kandev_cluster_lease_renewal_failures_total", func() float64 { return float64(lease.RenewalFailures()) })
	}
	m.GaugeFunc("kandev_tasks_queued", func() float64 {
		ctx, cancel := context.WithTimeout(b.life.ctx, 2*time.Second)
		defer cancel()
		n, err := b.store.QueuedTasks(ctx)
		if err != nil {
			return math.NaN()
		}
		return float64(n)
	})
	m.GaugeFunc("kandev_websocket_connections", func() float64 { return float64(b.ws.Connections()) })
	if b.agents == nil {
		return
	}
	turn := m.Turns()
	b.events.React(func(ev kanban.DomainEvent) {
		if t, ok := ev.(kanban.TurnEvent); ok && t.Ended {
			turn(t.StopReason, time.Since(t.StartedAt))
		}
	})
	m.LabeledGauges("kandev_agents_running", func() map[[2]string]float64 {
		out := map[[2]string]float64{}
		for k, n := range b.agents.RunningBy() {
			out[k] = float64(n)
		}
		return out
	})
	m.GaugeFunc("kandev_agent_queue_length", func() float64 { return float64(b.agents.Report().Queued) })
	m.CounterFunc("kandev_agent_sessions_taken_over_total", func() float64 { return float64(b.agents.TakenOver()) })
}

// bridgeCalls is action.Deps.ReportCalls: the calls a session's bridge
// counted, each entry checked against the closed sets (a catalog tool's
// name or "upstream", an outcome the wrapper logs) before any is counted,
// so a report either counts whole or not at all and no label value comes
// from a caller.
func (b *backend) bridgeCalls(cat *catalog.Catalog) func([]action.ReportedCall) error {
	tools := map[string]bool{metrics.UpstreamTool: true}
	for _, t := range cat.All() {
		tools[t.Name] = true
	}
	return func(calls []action.ReportedCall) error {
		seen := make(map[[2]string]bool, len(calls))
		for i, c := range calls {
			switch {
			case !tools[c.Tool]:
				return kanban.Errorf(kanban.CodeValidation, "calls[%d].tool is not a tool of the catalog nor upstream", i)
			case !metrics.KnownOutcome(c.Outcome):
				return kanban.Errorf(kanban.CodeValidation, "calls[%d].outcome is not an outcome the wrapper reports", i)
			case seen[[2]string{c.Tool, c.Outcome}]:
				return kanban.Errorf(kanban.CodeValidation, "calls[%d] repeats an earlier entry's tool and outcome", i)
			}
			seen[[2]string{c.Tool, c.Outcome}] = true
		}
		for _, c := range calls {
			b.metrics.ObserveBridge(c.Tool, c.Outcome, c.Count)
		}
		return nil
	}
}

// observeAction is action.Deps.Observe: the registry's calls, counted.
func (b *backend) observeAction(name string, caller action.Kind, err error, d time.Duration) {
	b.metrics.ObserveAction(name, caller.String(), err, d)
}

// metricsHandler serves /metrics to holders of the operator token.
func (b *backend) metricsHandler() http.Handler {
	return b.operatorOnly(b.metrics.Handler())
}
