package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	faultPath string
	buildErr  error
)

// kandevBinary builds cmd/kandev once per test run.
func kandevBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kandev-rel-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath, faultPath = filepath.Join(dir, "kandev"), filepath.Join(dir, "faultagent")
		for bin, pkg := range map[string]string{binPath: "../../cmd/kandev", faultPath: "./faultagent"} {
			if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("%w: %s", err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatalf("build kandev: %v", buildErr)
	}
	return binPath
}

func testEnv(t *testing.T) *Env {
	return &Env{KandevBin: kandevBinary(t), WorkDir: t.TempDir(), Logf: t.Logf}
}

// requirePassed fails the test with the scenario's failed checks.
func requirePassed(t *testing.T, s Scenario) {
	t.Helper()
	b, _ := json.MarshalIndent(s, "", "  ")
	if s.Skipped != "" {
		t.Skipf("SKIPPED %s: %s", s.Name, s.Skipped)
	}
	if !s.Passed {
		t.Fatalf("scenario %s failed:\n%s", s.Name, b)
	}
	t.Logf("%s", b)
}

func scenarioCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// ciScale picks a scenario's size for the race-instrumented run of
// `make test` or a plain `go test`.
func ciScale(race, plain int) int {
	if raceEnabled {
		return race
	}
	return plain
}

func TestLoad(t *testing.T) {
	t.Parallel()
	cfg := LoadConfig{Clients: 64, Calls: ciScale(40, 250)}
	requirePassed(t, RunLoad(scenarioCtx(t, 3*time.Minute), testEnv(t), cfg))
}

func TestCrash(t *testing.T) {
	t.Parallel()
	cfg := CrashConfig{Cycles: ciScale(2, 3), AcksPerCycle: ciScale(60, 200), Writers: 12, StartupKills: ciScale(4, 8)}
	requirePassed(t, RunCrash(scenarioCtx(t, 3*time.Minute), testEnv(t), cfg))
}

func TestRestart(t *testing.T) {
	t.Parallel()
	cfg := RestartConfig{Bridges: ciScale(4, 8), Agents: 4, Cycles: 2, Outage: time.Second}
	requirePassed(t, RunRestart(scenarioCtx(t, 4*time.Minute), testEnv(t), cfg))
}

func TestDiskFull(t *testing.T) {
	t.Parallel()
	requirePassed(t, RunDisk(scenarioCtx(t, 2*time.Minute), testEnv(t), DiskConfig{SizeMiB: 16, Writes: ciScale(20, 50)}))
}

func TestClients(t *testing.T) {
	t.Parallel()
	cfg := ClientsConfig{Sessions: 5000, SessionCap: 200, SlowBodies: 50, IdleConns: ciScale(500, 1000), HalfOpen: 50}
	requirePassed(t, RunClients(scenarioCtx(t, 4*time.Minute), testEnv(t), cfg))
}

func TestAgentFaults(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	requirePassed(t, RunAgentFaults(scenarioCtx(t, 3*time.Minute), env, AgentFaultsConfig{FaultAgent: faultPath, FloodMiB: 64}))
}
