package reliability

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// DiskConfig sizes the full-disk scenario: a tmpfs of SizeMiB, filled to
// the last byte, Writes refused writes, then space freed.
type DiskConfig struct {
	SizeMiB int
	Writes  int
}

// resumeBound is how soon writes must succeed again once space returns.
const resumeBound = 10 * time.Second

// RunDisk is the full-disk scenario. It needs root (to mount a tmpfs) and
// is skipped, saying so, otherwise.
func RunDisk(ctx context.Context, env *Env, cfg DiskConfig) Scenario {
	sc := newScenario("disk-full", "Full disk: the data dir's filesystem fills up",
		"the data dir on a small tmpfs filled to the last byte while kandev serve runs, and before a first start; then space freed",
		fmt.Sprintf("%d MiB tmpfs, %d writes while full", cfg.SizeMiB, cfg.Writes))
	dir, err := env.dir("disk")
	if err != nil {
		return sc.fail(err)
	}
	mnt := filepath.Join(dir, "mnt")
	unmount, why := mountTmpfs(mnt, cfg.SizeMiB)
	if why != "" {
		return sc.skip(why)
	}
	defer unmount()
	firstStartFull(ctx, env, sc, mnt, dir)
	srv, err := startServer(ctx, serverSpec{bin: env.KandevBin, dataDir: filepath.Join(mnt, "data"), logDir: dir, name: "serve", args: []string{"--launch-agents=false"}})
	if err != nil {
		return sc.fail(err)
	}
	defer srv.close()
	o, err := dialOps(ctx, srv, false)
	if err != nil {
		return sc.fail(err)
	}
	defer o.close()
	b, err := loadBoard(ctx, o)
	if err != nil {
		return sc.fail(err)
	}
	w := &diskWriter{o: o, workspaceID: b.workspaceID}
	before := newTally()
	for i := range 20 {
		w.create(ctx, before, fmt.Sprintf("disk before %d", i))
	}
	sc.calls("before the disk fills", before, false)
	filler := filepath.Join(mnt, "filler")
	if err := fill(filler); err != nil {
		return sc.fail(err)
	}
	w.whileFull(ctx, sc, cfg.Writes)
	if err := os.Remove(filler); err != nil {
		return sc.fail(err)
	}
	w.afterSpaceReturns(ctx, sc)
	o.close()
	srv.stop(15 * time.Second)
	verifyDisk(ctx, sc, filepath.Join(mnt, "data"), w.acks)
	return sc.done()
}

// diskWriter creates tasks in a workspace, keeping those acknowledged.
type diskWriter struct {
	o           *ops
	workspaceID string
	acks        []ack
}

// create creates one task titled title, tallied in tl.
func (w *diskWriter) create(ctx context.Context, tl *tally, title string) Outcome {
	t0 := time.Now()
	var out action.TaskCreateOut
	err := w.o.call(ctx, kanban.ActionTaskCreate, action.TaskCreateIn{WorkspaceID: w.workspaceID, Title: title,
		Prompt: strings.Repeat("x", 4<<10)}, &out)
	oc, d := classifyErr(err)
	tl.add(time.Since(t0), oc, d)
	if oc == OutcomeOK {
		w.acks = append(w.acks, ack{id: out.Task.ID, title: title})
	}
	return oc
}

// whileFull makes writes writes (and as many reads) on the full disk.
func (w *diskWriter) whileFull(ctx context.Context, sc *scenarioRun, writes int) {
	full, reads := newTally(), newTally()
	for i := range writes {
		w.create(ctx, full, fmt.Sprintf("disk full %d", i))
		t0 := time.Now()
		var page kanban.List[kanban.Task]
		oc, d := classifyErr(w.o.call(ctx, kanban.ActionTaskList, action.TaskListIn{WorkspaceID: w.workspaceID, Limit: 10}, &page))
		reads.add(time.Since(t0), oc, d)
	}
	st := full.stats()
	sc.s.Calls["writes while full"] = st
	sc.checkf("writes while full fail with UNAVAILABLE, not an internal error", st.Internal == 0 && st.Failed == 0 && st.Timeouts == 0 && st.Unavailable > 0,
		"%d writes: %d unavailable, %d ok (room left in the WAL), %d internal, %d other errors, %d timeouts; first: %v",
		st.Calls, st.Unavailable, st.OK, st.Internal, st.Failed, st.Timeouts, st.FirstErrors)
	sc.calls("reads while full", reads, false)
}

// afterSpaceReturns writes until 20 more succeed or resumeBound passes.
func (w *diskWriter) afterSpaceReturns(ctx context.Context, sc *scenarioRun) {
	resumed := time.Now()
	after := newTally()
	for i := 0; ; i++ {
		if w.create(ctx, after, fmt.Sprintf("disk after %d", i)) == OutcomeOK && i >= 20 {
			break
		}
		if time.Since(resumed) > resumeBound {
			break
		}
	}
	ast := after.stats()
	sc.s.Calls["writes after space returns"] = ast
	sc.checkf("service resumes when space returns", ast.OK >= 1 && ast.defects() == 0,
		"%d writes after freeing space: %d ok, first ok within the %s bound", ast.Calls, ast.OK, resumeBound)
}

// verifyDisk checks the database after the run.
func verifyDisk(ctx context.Context, sc *scenarioRun, dataDir string, acks []ack) {
	inStore(ctx, sc, dataDir, func(db *sql.DB) {
		lost, err := checkAcks(ctx, db, acks)
		sc.s.WritesChecked, sc.s.Lost = len(acks), lost
		sc.checkf("every acknowledged write present", err == nil && lost == 0, "%d acknowledged, %d missing or duplicated", len(acks), lost)
		noFirst, err := scalar(ctx, db, `SELECT COUNT(*) FROM task_sessions s WHERE NOT EXISTS (SELECT 1 FROM session_messages m WHERE m.session_id = s.id)`)
		noSession, err2 := scalar(ctx, db, `SELECT COUNT(*) FROM tasks t WHERE substr(t.title, 1, 5) = 'disk '
			AND NOT EXISTS (SELECT 1 FROM task_sessions s WHERE s.task_id = t.id)`)
		sc.checkf("nothing half-applied", errors.Join(err, err2) == nil && noFirst == 0 && noSession == 0,
			"%d tasks without their session, %d sessions without their first message", noSession, noFirst)
	})
}

// firstStartFull starts kandev serve on a fresh data dir of a full
// filesystem: it must exit with a clear error, leave no token file that
// would stop the next start, and start once space returns.
func firstStartFull(ctx context.Context, env *Env, sc *scenarioRun, mnt, logDir string) {
	data := filepath.Join(mnt, "fresh")
	filler := filepath.Join(mnt, "filler")
	if err := fill(filler); err != nil {
		sc.checkf("a first start on a full disk fails cleanly", false, "fill: %v", err)
		return
	}
	ctx2, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx2, env.KandevBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", data, "--launch-agents=false") //nolint:gosec // the binary under test
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	exited := errors.As(err, &ee) && ctx2.Err() == nil
	msg := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	sc.checkf("a first start on a full disk fails cleanly", exited && strings.Contains(msg, "no space left"),
		"exit: %v; last line: %s", err, kanban.Clip(msg, 200))
	_ = os.Remove(filler)
	srv, err := startServer(ctx, serverSpec{bin: env.KandevBin, dataDir: data, logDir: logDir, name: "fresh", tokenFile: true, args: []string{"--launch-agents=false"}})
	if err == nil {
		srv.close()
	}
	sc.checkf("it starts once space returns", err == nil, "%v", err)
	_ = os.RemoveAll(data)
}

// fill writes path until the filesystem has no byte left.
func fill(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	for _, size := range []int{1 << 20, 4 << 10, 1} {
		buf := make([]byte, size)
		for {
			if _, err := f.Write(buf); err != nil {
				if errors.Is(err, syscall.ENOSPC) {
					break
				}
				return err
			}
		}
	}
	return nil
}

// mountTmpfs mounts a tmpfs of sizeMiB at dir. It returns why it cannot
// (not root, or mounting refused) instead of failing.
func mountTmpfs(dir string, sizeMiB int) (func(), string) {
	if os.Geteuid() != 0 {
		return nil, "needs root to mount a tmpfs for the data dir (run the tests as root, as CI does)"
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err.Error()
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%dm,mode=0700", sizeMiB)); err != nil {
		return nil, "mounting a tmpfs was refused: " + err.Error()
	}
	return func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) }, ""
}
