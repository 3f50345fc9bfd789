package reliability

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// CrashConfig sizes the crash scenario: Cycles kill -9 / restart cycles,
// each after at least AcksPerCycle acknowledged writes, with Writers
// concurrent writers; then StartupKills kills during start-up (while
// migrations and the seed run) on fresh data dirs.
type CrashConfig struct {
	Cycles       int
	AcksPerCycle int
	Writers      int
	StartupKills int
}

// crashRun is the state of the write storm across cycles.
type crashRun struct {
	mu       sync.Mutex
	acks     []ack
	messages []string // acknowledged task.message ids
	sessions []string // sessions of acknowledged creates
	n        atomic.Int64
}

// RunCrash is the kill -9 scenario.
func RunCrash(ctx context.Context, env *Env, cfg CrashConfig) Scenario {
	sc := newScenario("crash", "Crash: kill -9 of kandev serve during a write storm",
		"SIGKILL of the backend while writers create tasks (each with its session and first message) and queue messages; restart on the same data dir",
		fmt.Sprintf("%d cycles × ≥%d acknowledged writes, %d writers; %d kills during start-up", cfg.Cycles, cfg.AcksPerCycle, cfg.Writers, cfg.StartupKills))
	dir, err := env.dir("crash")
	if err != nil {
		return sc.fail(err)
	}
	srv, err := startServer(ctx, serverSpec{bin: env.KandevBin, dataDir: dir + "/data", logDir: dir, name: "serve", args: []string{"--launch-agents=false"}})
	if err != nil {
		return sc.fail(err)
	}
	defer srv.close()
	cr := &crashRun{}
	storm, crashed := newTally(), newTally()
	restarts := 0
	for cycle := range cfg.Cycles {
		if err := cr.storm(ctx, srv, cfg, cycle, storm, crashed); err != nil {
			return sc.fail(err)
		}
		t0 := time.Now()
		if err := srv.restart(ctx); err != nil {
			sc.checkf("restarts after kill -9", false, "cycle %d: %v", cycle, err)
			return sc.done()
		}
		restarts++
		sc.s.Figures["restart_ms_max"] = max(sc.s.Figures["restart_ms_max"], ms(time.Since(t0)))
	}
	sc.checkf("restarts after kill -9", restarts == cfg.Cycles, "%d of %d restarts served", restarts, cfg.Cycles)
	sc.calls("storm", storm, false)
	st := crashed.stats()
	sc.s.Calls["in flight at the kill"] = st
	sc.checkf("calls in flight at the kill fail, none hangs", st.Timeouts == 0 && st.Internal == 0,
		"%d calls cut off by the kill: %d timeouts, %d internal errors", st.Calls, st.Timeouts, st.Internal)
	srv.stop(15 * time.Second)
	cr.verify(ctx, sc, dir+"/data")
	startupKills(ctx, env, sc, dir, cfg.StartupKills)
	return sc.done()
}

// storm runs writers until AcksPerCycle writes are acknowledged (plus a
// random few milliseconds), then kills the server.
func (cr *crashRun) storm(ctx context.Context, srv *server, cfg CrashConfig, cycle int, storm, crashed *tally) error {
	var writers []*ops
	defer func() {
		for _, o := range writers {
			o.close()
		}
	}()
	for range cfg.Writers {
		o, err := dialOps(ctx, srv, false)
		if err != nil {
			return err
		}
		writers = append(writers, o)
	}
	b, err := loadBoard(ctx, writers[0])
	if err != nil {
		return err
	}
	var killed atomic.Bool
	var wg sync.WaitGroup
	start := cr.n.Load()
	for i, o := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(cycle), uint64(i))) //nolint:gosec // reproducible mix
			for ctx.Err() == nil {
				t0 := time.Now()
				oc, d := cr.write(ctx, o, b, rng)
				if killed.Load() {
					crashed.add(time.Since(t0), oc, d)
					return
				}
				storm.add(time.Since(t0), oc, d)
				if oc != OutcomeOK {
					return
				}
			}
		})
	}
	for cr.n.Load()-start < int64(cfg.AcksPerCycle) && ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond) //nolint:gosec // jitter of the kill
	killed.Store(true)
	srv.kill()
	wg.Wait()
	return ctx.Err()
}

// write makes one acknowledged write: mostly task creates (a session and
// its first message written with each), else a message queued to one of
// the acknowledged tasks' sessions.
func (cr *crashRun) write(ctx context.Context, o *ops, b *board, rng *rand.Rand) (Outcome, string) {
	cr.mu.Lock()
	nsess := len(cr.sessions)
	var target string
	if nsess > 0 && rng.IntN(4) == 0 {
		target = cr.sessions[rng.IntN(nsess)]
	}
	cr.mu.Unlock()
	if target != "" {
		var out action.TaskMessageOut
		var sess kanban.Session
		if err := o.call(ctx, kanban.ActionSessionGet, action.IDIn{ID: target}, &sess); err != nil {
			return classifyErr(err)
		}
		err := o.call(ctx, kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: sess.TaskID, SessionID: target, Prompt: "queued " + kanban.NewID()}, &out)
		if err == nil {
			cr.mu.Lock()
			cr.messages = append(cr.messages, out.Message.ID)
			cr.mu.Unlock()
			cr.n.Add(1)
		}
		return classifyErr(err)
	}
	title := "crash " + kanban.NewID()
	var out action.TaskCreateOut
	err := o.call(ctx, kanban.ActionTaskCreate, action.TaskCreateIn{WorkspaceID: b.workspaceID, Title: title, Prompt: "prompt of " + title, ExternalID: title}, &out)
	if err == nil {
		if out.SessionID == "" {
			return OutcomeFailed, "task.create with start_agent returned no session"
		}
		cr.mu.Lock()
		cr.acks = append(cr.acks, ack{id: out.Task.ID, title: title})
		cr.sessions = append(cr.sessions, out.SessionID)
		cr.mu.Unlock()
		cr.n.Add(1)
	}
	return classifyErr(err)
}

// verify checks the database after the last restart.
func (cr *crashRun) verify(ctx context.Context, sc *scenarioRun, dataDir string) {
	inStore(ctx, sc, dataDir, func(db *sql.DB) {
		lost, err := checkAcks(ctx, db, cr.acks)
		if err != nil {
			sc.checkf("every acknowledged write present", false, "%v", err)
			return
		}
		lostMsgs := 0
		for _, id := range cr.messages {
			if n, err := scalar(ctx, db, `SELECT COUNT(*) FROM session_messages WHERE id = ?`, id); err != nil || n != 1 {
				lostMsgs++
			}
		}
		sc.s.WritesChecked, sc.s.Lost = len(cr.acks)+len(cr.messages), lost+lostMsgs
		sc.checkf("every acknowledged write present", lost+lostMsgs == 0, "%d creates and %d messages acknowledged; %d creates and %d messages missing or duplicated",
			len(cr.acks), len(cr.messages), lost, lostMsgs)
		noSession, err1 := scalar(ctx, db, `SELECT COUNT(*) FROM tasks t WHERE substr(t.title, 1, 6) = 'crash '
			AND NOT EXISTS (SELECT 1 FROM task_sessions s WHERE s.task_id = t.id)`)
		noFirst, err2 := scalar(ctx, db, `SELECT COUNT(*) FROM task_sessions s
			WHERE NOT EXISTS (SELECT 1 FROM session_messages m WHERE m.session_id = s.id)`)
		total, err3 := countLike(ctx, db, "crash ")
		sc.checkf("nothing half-applied", errors.Join(err1, err2, err3) == nil && noSession == 0 && noFirst == 0,
			"%d storm tasks in the database (%d acknowledged); %d tasks without their session, %d sessions without their first message",
			total, len(cr.acks), noSession, noFirst)
		sc.check(positionsDense(ctx, db))
	})
}

// startupKills kills fresh servers at random moments of their start-up
// (migrations, seed, token file), then starts each normally and checks
// the schema and the seed are complete, exactly once.
func startupKills(ctx context.Context, env *Env, sc *scenarioRun, dir string, n int) {
	if n == 0 {
		return
	}
	ok, bad := 0, []string{}
	for i := range n {
		data := fmt.Sprintf("%s/startup-%d", dir, i)
		delay := time.Duration(rand.IntN(60)) * time.Millisecond //nolint:gosec // spread of kill moments
		if err := killDuringStart(ctx, env, data, dir, delay); err != nil {
			bad = append(bad, err.Error())
			continue
		}
		if err := checkSeeded(ctx, env, data, dir); err != nil {
			bad = append(bad, fmt.Sprintf("kill after %s: %v", delay, err))
			continue
		}
		ok++
	}
	sc.checkf("a kill during start-up leaves a database that starts, migrated and seeded once", ok == n,
		"%d of %d data dirs killed at 0–60 ms of start-up (which takes about 45 ms) then started cleanly; failures: %v", ok, n, bad)
}
