package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/agent"
)

// Doctor bounds: each check's time, an agent probe's, the free space under
// which the data dir's disk is a warning, and the clock skew past which
// backends disagree.
const (
	checkTimeout   = 15 * time.Second
	doctorProbe    = 20 * time.Second
	lowDiskBytes   = 1 << 30
	maxClockSkew   = 2 * time.Second
	doctorAgentMax = 64
)

// Check outcomes, as the report prints them.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "FAIL"
	checkSkip = "skip"
)

// checkResult is one line of kandev doctor's report.
type checkResult struct {
	Name, Status, Detail, Fix string
}

// doctorConfig is what kandev doctor checks.
type doctorConfig struct {
	DataDir, Database, AgentsFile, Executable string
}

// doctorCmd runs kandev doctor: every check, each bounded in time, one
// line each with a fix under a failure or warning; an error (exit
// non-zero) when any check failed.
func doctorCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dataDir := newFlags("doctor", stderr)
	database := databaseFlag(fs)
	agents := fs.String("agents-file", envOr("KANDEV_AGENTS_FILE", ""), "agents file (default DATA_DIR/agents.json; env KANDEV_AGENTS_FILE)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New("doctor: takes no arguments")
	}
	cfg := doctorConfig{DataDir: *dataDir, Database: *database, AgentsFile: *agents, Executable: cliPath()}
	if cfg.AgentsFile == "" {
		cfg.AgentsFile = filepath.Join(cfg.DataDir, agent.AgentsFile)
	}
	failed := 0
	for _, r := range runDoctor(ctx, cfg) {
		if r.Status == checkFail {
			failed++
		}
		_, _ = fmt.Fprintf(stdout, "%-4s  %-10s  %s\n", r.Status, r.Name, r.Detail)
		if r.Fix != "" && (r.Status == checkFail || r.Status == checkWarn) {
			_, _ = fmt.Fprintf(stdout, "      %-10s  fix: %s\n", "", r.Fix)
		}
	}
	if failed > 0 {
		return fmt.Errorf("doctor: %d check(s) failed", failed)
	}
	_, err := fmt.Fprintln(stdout, "all checks passed")
	return err
}

// runDoctor runs every check in report order.
func runDoctor(ctx context.Context, cfg doctorConfig) []checkResult {
	var out []checkResult
	out = append(out, bounded(ctx, checkGit))
	out = append(out, checkDataDir(cfg.DataDir)...)
	db, dbResults := checkDatabase(ctx, cfg)
	out = append(out, dbResults...)
	out = append(out, checkAgents(ctx, cfg, db)...)
	out = append(out, checkExecutors(ctx, db)...)
	return out
}

// bounded runs one check within checkTimeout.
func bounded(ctx context.Context, check func(context.Context) checkResult) checkResult {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	return check(ctx)
}

// existingDir is dir, or its nearest existing parent when it does not
// exist yet (serve creates it).
func existingDir(dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, false
	}
	for p := abs; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p, p == abs
		}
		if filepath.Dir(p) == p {
			return p, false
		}
	}
}
