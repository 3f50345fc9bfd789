package bench

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

// Sections are the run's parts, in the order they run.
var Sections = []string{"validation", "modes", "catalog", "prwatch", "usage", "routines", "roundtrip", "store", "board", "agents", "flow", "upstream", "postgres", "changes", "terminal"}

// Run measures the selected sections (all when only is empty) and returns
// the results with targets evaluated. In-process micro benchmarks run
// first, while no child process competes for the CPU.
func Run(ctx context.Context, cfg Config, only []string) (*Results, error) {
	start := time.Now()
	r := &Results{
		FormatVersion: FormatVersion,
		Date:          start.UTC().Format(time.RFC3339),
		Machine:       DescribeMachine(),
		Method: Method{Repetitions: cfg.Reps, MicroRepetitions: cfg.MicroReps, PointSeconds: cfg.Point, BenchTime: cfg.BenchTime,
			ClientCounts: cfg.Clients, StoreTasks: cfg.StoreTasks},
	}
	want := func(s string) bool { return len(only) == 0 || slices.Contains(only, s) }
	if err := setBenchTime(cfg.BenchTime); err != nil {
		return nil, err
	}
	if v, err := runCmd(ctx, "", nil, cfg.KandevBin, "version"); err == nil {
		// Its first line: the version (the schema lines follow).
		first, _, _ := strings.Cut(strings.TrimSpace(v), "\n")
		r.KandevVersion = strings.TrimSpace(strings.TrimPrefix(first, "kandev"))
	} else {
		return nil, err
	}
	compiled, err := toolserver.Compile()
	if err != nil {
		return nil, fmt.Errorf("compile catalog: %w", err)
	}
	if err := measureMicro(ctx, cfg, compiled, want, r); err != nil {
		return nil, err
	}
	if err := measureSystem(ctx, cfg, want, r); err != nil {
		return nil, err
	}
	r.Targets = Evaluate(r)
	r.ElapsedSeconds = time.Since(start).Seconds()
	return r, nil
}

// measureMicro runs the selected in-process micro benchmarks into r.
func measureMicro(ctx context.Context, cfg Config, compiled *toolserver.Compiled, want func(string) bool, r *Results) error {
	var err error
	if want("validation") {
		if r.Validation, err = MeasureValidation(ctx, compiled, cfg.MicroReps, cfg.Logf); err != nil {
			return fmt.Errorf("validation: %w", err)
		}
	}
	if want("modes") {
		if r.ModeSwitch, r.Compile, err = MeasureModeSwitch(compiled, cfg.Reps, cfg.Logf); err != nil {
			return fmt.Errorf("mode switch: %w", err)
		}
	}
	if want("catalog") {
		if r.Catalog, err = MeasureCatalog(ctx, compiled); err != nil {
			return fmt.Errorf("catalog: %w", err)
		}
	}
	if want("prwatch") {
		if r.PRWatch, err = MeasurePRWatch(ctx, cfg); err != nil {
			return fmt.Errorf("prwatch: %w", err)
		}
	}
	if want("usage") {
		if r.Usage, err = MeasureUsage(ctx, cfg); err != nil {
			return fmt.Errorf("usage: %w", err)
		}
	}
	if want("routines") {
		if r.Routines, err = MeasureRoutines(ctx, cfg); err != nil {
			return fmt.Errorf("routines: %w", err)
		}
	}
	return nil
}

// measureSystem runs the selected sections that start processes (the
// kandev binary, agents, databases) into r.
func measureSystem(ctx context.Context, cfg Config, want func(string) bool, r *Results) error {
	var err error
	if want("roundtrip") {
		rt, err := MeasureRoundTrips(ctx, cfg)
		if err != nil {
			return fmt.Errorf("round trip: %w", err)
		}
		r.RoundTrip, r.Bridge, r.Profiles, r.Durability = rt.points, rt.bridge, rt.profiles, rt.durability
	}
	if want("store") {
		if r.Store, err = MeasureStore(ctx, cfg); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	if want("board") {
		if r.Board, err = MeasureBoard(ctx, cfg); err != nil {
			return fmt.Errorf("board: %w", err)
		}
	}
	if want("agents") {
		if r.Agents, err = MeasureAgents(ctx, cfg); err != nil {
			return fmt.Errorf("agents: %w", err)
		}
		if r.Agents.DockerFirstToolCall, r.Agents.DockerNote, err = MeasureDockerAgents(ctx, cfg); err != nil {
			return fmt.Errorf("agents in Docker: %w", err)
		}
		if r.Agents.SSHFirstToolCall, r.Agents.SSHNote, err = MeasureSSHAgents(ctx, cfg); err != nil {
			return fmt.Errorf("agents over SSH: %w", err)
		}
	}
	if want("flow") {
		if r.Flow, err = MeasureFlow(ctx, cfg); err != nil {
			return fmt.Errorf("flow: %w", err)
		}
	}
	if want("upstream") {
		if r.Upstream, err = MeasureUpstream(ctx, cfg); err != nil {
			return fmt.Errorf("upstream: %w", err)
		}
	}
	if want("postgres") {
		var note string
		if r.Postgres, note, err = MeasurePostgres(ctx, cfg); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		if note != "" {
			r.Notes = append(r.Notes, note)
		}
	}
	if want("changes") {
		if r.Changes, err = MeasureChanges(ctx, cfg); err != nil {
			return fmt.Errorf("changes: %w", err)
		}
	}
	if want("terminal") {
		if r.Terminal, err = MeasureTerminal(ctx, cfg); err != nil {
			return fmt.Errorf("terminal: %w", err)
		}
	}
	return nil
}

// setBenchTime sets testing.Benchmark's time per benchmark.
func setBenchTime(d string) error {
	testing.Init()
	if err := flag.Set("test.benchtime", d); err != nil {
		return fmt.Errorf("bench time %q: %w", d, err)
	}
	return nil
}
