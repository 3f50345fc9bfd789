package reliability

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// killDuringStart starts `kandev serve` on a fresh data dir (token file
// included) and SIGKILLs it after delay, wherever its start-up is.
func killDuringStart(ctx context.Context, env *Env, dataDir, logDir string, delay time.Duration) error {
	logf, err := logFile(logDir, "startup")
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }()
	cmd := exec.CommandContext(ctx, env.KandevBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--launch-agents=false") //nolint:gosec // the binary under test
	cmd.Env = os.Environ()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	time.Sleep(delay)
	_ = cmd.Process.Kill() // it may have failed on its own; Wait says
	_ = cmd.Wait()
	return nil
}

// checkSeeded starts a server on dataDir normally, stops it, and checks
// the schema and the seed: every migration recorded once, one default
// workspace with its four-step workflow, five agents and two executors,
// each with one default profile.
func checkSeeded(ctx context.Context, env *Env, dataDir, logDir string) error {
	srv, err := startServer(ctx, serverSpec{bin: env.KandevBin, dataDir: dataDir, logDir: logDir, name: "startup", tokenFile: true,
		args: []string{"--launch-agents=false"}})
	if err != nil {
		return err
	}
	o, err := dialOps(ctx, srv, false)
	if err != nil {
		srv.close()
		return fmt.Errorf("the operator token does not authenticate: %w", err)
	}
	_, err = loadBoard(ctx, o)
	o.close()
	srv.close()
	if err != nil {
		return err
	}
	st, err := openStore(ctx, dataDir)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	db := st.DB()
	want := []struct {
		what  string
		query string
		n     int
	}{
		{"workspaces", `SELECT COUNT(*) FROM workspaces`, 1},
		{"workflows", `SELECT COUNT(*) FROM workflows`, 1},
		{"steps", `SELECT COUNT(*) FROM workflow_steps`, 4},
		{"start steps", `SELECT COUNT(*) FROM workflow_steps WHERE is_start_step = 1`, 1},
		{"agents", `SELECT COUNT(DISTINCT name) FROM agents`, 22},
		{"agent rows", `SELECT COUNT(*) FROM agents`, 22},
		{"agent profiles", `SELECT COUNT(*) FROM agent_profiles`, 22},
		{"executors", `SELECT COUNT(*) FROM executors`, store.SeededExecutors()},
		{"executor profiles", `SELECT COUNT(*) FROM executor_profiles`, 2},
		{"migrations recorded once", `SELECT COUNT(*) FROM schema_migrations`, store.MigrationCount()},
		{"schema at the latest version", `SELECT MAX(version) FROM schema_migrations`, store.LatestVersion()},
	}
	var errs []error
	for _, w := range want {
		n, err := scalar(ctx, db, w.query)
		if err != nil || n != w.n {
			errs = append(errs, fmt.Errorf("%s: got %d, want %d", w.what, n, w.n), err)
		}
	}
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		errs = append(errs, fmt.Errorf("integrity_check: %s", res), err)
	}
	return errors.Join(errs...)
}
