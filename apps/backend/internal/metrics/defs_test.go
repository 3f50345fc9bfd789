package metrics

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the metrics table of docs/public/operations.md")

const opsPage = "../../../../docs/public/operations.md"

// tableMarks bound the generated table on the Operations page.
const (
	tableStart = "<!-- metrics table: generated from internal/metrics/defs.go (go test ./internal/metrics -update) -->\n"
	tableEnd   = "<!-- end of metrics table -->"
)

// TestOperationsDocsListEveryMetric: the Operations page's metrics table
// is DocTable, so every declared family is documented as declared.
func TestOperationsDocsListEveryMetric(t *testing.T) {
	page, err := os.ReadFile(opsPage)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(page), tableStart)
	if !ok {
		t.Fatal("no generated metrics table on the Operations page")
	}
	table, after, ok := strings.Cut(rest, tableEnd)
	if !ok {
		t.Fatal("the Operations page's metrics table has no end mark")
	}
	if table == DocTable() {
		return
	}
	if *update {
		if err := os.WriteFile(opsPage, []byte(before+tableStart+DocTable()+tableEnd+after), 0o644); err != nil { //nolint:gosec // a docs page
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("the Operations page's metrics table is stale: run go test ./internal/metrics -update\nwant:\n%s", DocTable())
}

// TestEveryFamilyRegisters registers every declared family the way the
// backend does and checks the registry gathers each under its type.
func TestEveryFamilyRegisters(t *testing.T) {
	m := New()
	m.Histogram("kandev_store_write_transaction_duration_seconds").Observe(0.001)
	m.Histogram("kandev_cluster_event_lag_seconds").Observe(0.001)
	for _, n := range []string{"kandev_store_commits_total", "kandev_store_writes_total", "kandev_store_transaction_retries_total",
		"kandev_cluster_events_dropped_total", "kandev_cluster_lease_renewal_failures_total", "kandev_agent_sessions_taken_over_total"} {
		m.CounterFunc(n, func() float64 { return 1 })
	}
	m.GaugeFunc("kandev_websocket_connections", func() float64 { return 1 })
	m.GaugeFunc("kandev_agent_queue_length", func() float64 { return 0 })
	m.GaugeFunc("kandev_tasks_queued", func() float64 { return 0 })
	m.GaugeFunc("kandev_cluster_lease_age_seconds", func() float64 { return 1 })
	m.GaugeFunc("kandev_cluster_lease_ttl_seconds", func() float64 { return 15 })
	m.LabeledGauges("kandev_agents_running", func() map[[2]string]float64 { return map[[2]string]float64{{"mock-agent", "local"}: 1} })
	m.Turns()("end_turn", 0)
	m.ObserveAction("task.list", "operator", nil, 0)
	m.ObserveTool("list_tasks_kandev", KindInvalidArguments, 0)
	m.ObserveBridge(UpstreamTool, "timeout", 2)
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fams {
		got[f.GetName()] = strings.ToLower(f.GetType().String())
	}
	for _, d := range defs {
		if got[d.Name] != d.Type {
			t.Errorf("%s gathered as %q, declared a %s", d.Name, got[d.Name], d.Type)
		}
	}
}

// TestUndeclaredFamilyPanics: registering a family that is not declared
// (or with another type) fails at once.
func TestUndeclaredFamilyPanics(t *testing.T) {
	for name, reg := range map[string]func(m *Metrics){
		"undeclared":   func(m *Metrics) { m.GaugeFunc("kandev_nothing", func() float64 { return 0 }) },
		"another type": func(m *Metrics) { m.GaugeFunc("kandev_store_commits_total", func() float64 { return 0 }) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered without a panic", name)
				}
			}()
			reg(New())
		}()
	}
}
