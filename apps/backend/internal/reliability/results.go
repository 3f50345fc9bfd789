package reliability

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/bench"
)

// FormatVersion is the version of the results.json layout.
const FormatVersion = 1

// Results is one run of every scenario: the content of
// reliability/results.json and the only input of the generated page.
type Results struct {
	FormatVersion  int           `json:"format_version"`
	Date           string        `json:"date"` // RFC 3339, UTC
	ElapsedSeconds float64       `json:"elapsed_seconds"`
	Machine        bench.Machine `json:"machine"`
	KandevVersion  string        `json:"kandev_version"`
	Commands       []string      `json:"commands"`
	Scenarios      []Scenario    `json:"scenarios"`
}

// Config sizes every scenario of a run.
type Config struct {
	Load        LoadConfig
	Crash       CrashConfig
	Restart     RestartConfig
	Disk        DiskConfig
	Clients     ClientsConfig
	AgentFaults AgentFaultsConfig
}

// FullScale is the size `make reliability` runs at; the tests run smaller.
func FullScale(faultAgent string) Config {
	return Config{
		Load:        LoadConfig{Clients: 64, Calls: 1000},
		Crash:       CrashConfig{Cycles: 5, AcksPerCycle: 500, Writers: 16, StartupKills: 20},
		Restart:     RestartConfig{Bridges: 16, Agents: 6, Cycles: 4, Outage: 2 * time.Second},
		Disk:        DiskConfig{SizeMiB: 16, Writes: 200},
		Clients:     ClientsConfig{Sessions: 20000, SessionCap: 1000, SlowBodies: 200, IdleConns: 2000, HalfOpen: 200},
		AgentFaults: AgentFaultsConfig{FaultAgent: faultAgent, FloodMiB: 256},
	}
}

// Names are the scenarios in the order a run takes them.
var Names = []string{"load", "crash", "restart", "disk-full", "clients", "agent-faults"}

// Run runs the scenarios named in only (all when empty), one after the
// other, and returns their results.
func Run(ctx context.Context, env *Env, cfg Config, only []string) (*Results, error) {
	for _, n := range only {
		if !slices.Contains(Names, n) {
			return nil, fmt.Errorf("unknown scenario %q (have %s)", n, strings.Join(Names, ", "))
		}
	}
	t0 := time.Now()
	r := &Results{FormatVersion: FormatVersion, Date: t0.UTC().Format(time.RFC3339), Machine: bench.DescribeMachine()}
	out, err := exec.CommandContext(ctx, env.KandevBin, "version").Output() //nolint:gosec // the binary under test
	if err != nil {
		return nil, fmt.Errorf("kandev version: %w", err)
	}
	r.KandevVersion = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "kandev"))
	runs := map[string]func() Scenario{
		"load":         func() Scenario { return RunLoad(ctx, env, cfg.Load) },
		"crash":        func() Scenario { return RunCrash(ctx, env, cfg.Crash) },
		"restart":      func() Scenario { return RunRestart(ctx, env, cfg.Restart) },
		"disk-full":    func() Scenario { return RunDisk(ctx, env, cfg.Disk) },
		"clients":      func() Scenario { return RunClients(ctx, env, cfg.Clients) },
		"agent-faults": func() Scenario { return RunAgentFaults(ctx, env, cfg.AgentFaults) },
	}
	for _, n := range Names {
		if len(only) > 0 && !slices.Contains(only, n) {
			continue
		}
		env.logf("scenario %s", n)
		s := runs[n]()
		env.logf("scenario %s: passed %v (%.1f s)", n, s.Passed, s.Seconds)
		r.Scenarios = append(r.Scenarios, s)
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
	}
	r.ElapsedSeconds = time.Since(t0).Seconds()
	return r, nil
}

// Failed lists the scenarios that ran and did not pass (a skipped one
// is listed as skipped on the page, not as failed).
func (r *Results) Failed() []string {
	var out []string
	for _, s := range r.Scenarios {
		if !s.Passed && s.Skipped == "" {
			out = append(out, s.Name)
		}
	}
	return out
}

// WriteFile writes r as indented JSON.
func (r *Results) WriteFile(path string) error { return bench.WriteResults(path, r) }

// ReadFile reads results written by WriteFile.
func ReadFile(path string) (*Results, error) {
	var r Results
	if err := bench.ReadResults(path, &r, &r.FormatVersion, FormatVersion); err != nil {
		return nil, err
	}
	return &r, nil
}
