package app

import (
	"net/http"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// newMetrics is the backend's registry with its gauges and counters read
// from the parts that keep them: the store, the WebSocket server and the
// agent runtime (read at each scrape, so they never drift from what those
// parts report). Called once the parts exist.
func (b *backend) newMetrics() {
	m := b.metrics
	writes := m.Histogram("kandev_store_write_transaction_duration_seconds",
		"Time a write transaction took from the caller's side: on SQLite its wait for and share of a group commit, on PostgreSQL the transaction with its retries.")
	b.store.ObserveWrites(func(d time.Duration) { writes.Observe(d.Seconds()) })
	m.CounterFunc("kandev_store_commits_total", "Write transactions this backend committed (on SQLite, group commits).",
		func() float64 { c, _ := b.store.WriteStats(); return float64(c) })
	m.CounterFunc("kandev_store_writes_total", "Writes those commits held; writes over commits is the mean group-commit batch size.",
		func() float64 { _, w := b.store.WriteStats(); return float64(w) })
	m.CounterFunc("kandev_store_transaction_retries_total", "PostgreSQL transactions run again after a serialization failure (0 on SQLite).",
		func() float64 { return float64(b.store.TxRetries()) })
	m.GaugeFunc("kandev_websocket_connections", "WebSocket connections open now (board, CLI, agents' MCP bridges).",
		func() float64 { return float64(b.ws.Connections()) })
	if b.agents == nil {
		return
	}
	turn := m.Turns()
	b.events.React(func(ev kanban.DomainEvent) {
		if t, ok := ev.(kanban.TurnEvent); ok && t.Ended {
			turn(t.StopReason, time.Since(t.StartedAt))
		}
	})
	m.LabeledGauges("kandev_agents_running", "Agent processes running now on this backend, by agent type and executor (local or docker).",
		[2]string{"agent_type", "executor"}, func() map[[2]string]float64 {
			out := map[[2]string]float64{}
			for k, n := range b.agents.RunningBy() {
				out[k] = float64(n)
			}
			return out
		})
	m.GaugeFunc("kandev_agent_queue_length", "Sessions waiting for an agent slot (--max-agents) on this backend.",
		func() float64 { return float64(b.agents.Report().Queued) })
}

// observeAction is action.Deps.Observe: the registry's calls, counted.
func (b *backend) observeAction(name string, caller action.Kind, err error, d time.Duration) {
	b.metrics.ObserveAction(name, caller.String(), err, d)
}

// metricsHandler serves /metrics to holders of the operator token.
func (b *backend) metricsHandler() http.Handler {
	return b.operatorOnly(b.metrics.Handler())
}
