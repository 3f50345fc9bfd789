package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The monitoring files a team imports as they are: Prometheus alert rules
// with their promtool unit tests, and a Grafana dashboard.
const (
	monitoringDir = "../../packaging/monitoring"
	alertRules    = "kandev-alerts.yml"
	alertTests    = "kandev-alerts.test.yml"
	dashboardFile = "kandev-dashboard.json"
)

// familyRef matches a metric name in a PromQL expression.
var familyRef = regexp.MustCompile(`\b(kandev_[a-z_]+|process_[a-z_]+|go_[a-z_]+)\b`)

// declaredFamily is the declared family a series name belongs to (a
// histogram's _bucket, _sum and _count series belong to it), or "".
func declaredFamily(series string) string {
	for _, d := range defs {
		if series == d.Name {
			return d.Name
		}
		if d.Type == "histogram" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if series == d.Name+suffix {
					return d.Name
				}
			}
		}
	}
	return ""
}

// dashboard is the part of the Grafana dashboard the tests read.
type dashboard struct {
	UID    string `json:"uid"`
	Panels []struct {
		ID         int `json:"id"`
		Title      string
		Datasource struct{ UID string } `json:"datasource"`
		Targets    []struct {
			Expr  string `json:"expr"`
			RefID string `json:"refId"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(monitoringDir, dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	return d
}

// TestMonitoringUsesDeclaredMetrics: every kandev_ family the alert rules
// and the dashboard query is declared (so /metrics serves it), every
// declared family is on the dashboard, and every panel queries the
// dashboard's Prometheus input.
func TestMonitoringUsesDeclaredMetrics(t *testing.T) {
	rules, err := os.ReadFile(filepath.Join(monitoringDir, alertRules))
	if err != nil {
		t.Fatal(err)
	}
	d := readDashboard(t)
	if d.UID == "" || len(d.Panels) == 0 {
		t.Fatal("the dashboard has no uid or no panels")
	}
	shown := map[string]bool{}
	ids := map[int]bool{}
	var exprs []string
	for _, p := range d.Panels {
		if ids[p.ID] || p.Datasource.UID != "${DS_PROMETHEUS}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: a duplicate id, another datasource than the input, or no query", p.Title)
		}
		ids[p.ID] = true
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}
	for _, m := range familyRef.FindAllString(string(rules)+"\n"+strings.Join(exprs, "\n"), -1) {
		if strings.HasPrefix(m, "kandev_") && declaredFamily(m) == "" {
			t.Errorf("%s is queried but not declared in defs.go", m)
		}
		shown[declaredFamily(m)] = true
	}
	for _, def := range defs {
		if !shown[def.Name] {
			t.Errorf("%s is declared but on no dashboard panel or rule", def.Name)
		}
	}
}

// promtool finds Debian's promtool; required under KANDEV_MONITORING_TESTS=1.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("KANDEV_MONITORING_TESTS") == "1" {
			t.Fatal("promtool is not installed (make promtool installs Debian's prometheus package)")
		}
		t.Skip("promtool is not installed")
	}
	return p
}

func runPromtool(t *testing.T, bin string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...) //nolint:gosec // promtool from PATH, our own files
	cmd.Dir = monitoringDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestAlertRules checks the alert rules with promtool and runs their unit
// tests: each alert fires on the series that should fire it, with its
// labels and annotations, and not before its time.
func TestAlertRules(t *testing.T) {
	bin := promtool(t)
	runPromtool(t, bin, "check", "rules", alertRules)
	runPromtool(t, bin, "test", "rules", alertTests)
}

// TestDashboardQueriesParse has promtool parse every dashboard query, as
// the expression of a recording rule (with the $instance variable as
// Grafana's "All" puts it).
func TestDashboardQueriesParse(t *testing.T) {
	bin := promtool(t)
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range readDashboard(t).Panels {
		for _, q := range p.Targets {
			n++
			expr, _ := json.Marshal(strings.ReplaceAll(q.Expr, "$instance", ".*"))
			fmt.Fprintf(&b, "      - record: kandev:dashboard_query_%d\n        expr: %s\n", n, expr)
		}
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, bin, "check", "rules", f)
}
