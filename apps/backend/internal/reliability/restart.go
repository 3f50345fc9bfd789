package reliability

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// RestartConfig sizes the restart scenario.
type RestartConfig struct {
	Bridges int // attached kandev mcp bridges making calls throughout
	Agents  int // mock agents, half of them mid-turn at each restart
	// Cycles alternate a graceful restart (SIGTERM) and a kill -9.
	Cycles int
	// Outage is how long the backend stays down each time.
	Outage time.Duration
}

// Bounds the scenario checks (the ws client's backoff tops out at 5 s).
const (
	reattachBound = 10 * time.Second
	failFastBound = 5 * time.Second
)

// restartRun is the scenario's shared state.
type restartRun struct {
	srv     *server
	agentTs []string // tasks of the mock agents (message targets)
	down    atomic.Bool
	cycle   atomic.Int32
	upAt    atomic.Int64 // unix nanos the backend served again

	mu        sync.Mutex
	acks      []ack    // logical creates, acknowledged after retries
	sent      []string // message contents acknowledged
	tried     []string // message contents attempted (at most once each)
	reattach  []time.Duration
	outageMax time.Duration
}

// RunRestart is the restart-under-load scenario.
func RunRestart(ctx context.Context, env *Env, cfg RestartConfig) Scenario {
	sc := newScenario("restart", "Restart under load: bridges attached, agents running",
		"the backend restarted (SIGTERM, then kill -9 alternately) while kandev mcp bridges make calls and mock agents run, some mid-turn",
		fmt.Sprintf("%d bridges, %d mock agents, %d restarts, %s down each", cfg.Bridges, cfg.Agents, cfg.Cycles, cfg.Outage))
	dir, err := env.dir("restart")
	if err != nil {
		return sc.fail(err)
	}
	srv, err := startServer(ctx, serverSpec{bin: env.KandevBin, dataDir: dir + "/data", logDir: dir, name: "serve", args: []string{"--max-agents", "16"}})
	if err != nil {
		return sc.fail(err)
	}
	defer srv.close()
	r := &restartRun{srv: srv}
	o, err := dialOps(ctx, srv, true)
	if err != nil {
		return sc.fail(err)
	}
	defer o.close()
	b, err := loadBoard(ctx, o)
	if err != nil {
		return sc.fail(err)
	}
	homes, tokens, err := r.homeSessions(ctx, o, b, cfg.Bridges)
	if err != nil {
		return sc.fail(err)
	}
	agentSessions, err := r.startAgents(ctx, o, b, homes, cfg.Agents)
	if err != nil {
		return sc.fail(err)
	}
	bridges, err := r.attachBridges(ctx, env, dir, homes, tokens)
	defer func() {
		for _, m := range bridges {
			m.close()
		}
	}()
	if err != nil {
		return sc.fail(err)
	}
	phases, leftovers, err := r.underLoad(ctx, sc, cfg, o, bridges, agentSessions)
	if err != nil {
		return sc.fail(err)
	}
	r.report(sc, phases, leftovers)
	r.checkAttached(ctx, sc, o, homes)
	for _, m := range bridges {
		m.close()
	}
	o.close()
	srv.stop(15 * time.Second)
	r.verify(ctx, sc, dir+"/data", agentSessions)
	return sc.done()
}

// underLoad restarts the backend cfg.Cycles times while every bridge
// makes calls, checking the agents after each restart; the bridges' calls
// have stopped when it returns.
func (r *restartRun) underLoad(ctx context.Context, sc *scenarioRun, cfg RestartConfig, o *ops, bridges []*mcpConn, agentSessions []string) (map[string]*tally, []int, error) {
	phases := map[string]*tally{"before": newTally(), "outage": newTally(), "after": newTally()}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, m := range bridges {
		wg.Go(func() { r.bridgeLoop(ctx, m, i, phases, stop) })
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	sleepCtx(ctx, time.Second)
	var leftovers []int
	for cycle := range cfg.Cycles {
		left, err := r.restartOnce(ctx, cfg, cycle)
		if err != nil {
			return nil, nil, err
		}
		leftovers = append(leftovers, left...)
		r.checkAgents(ctx, sc, o, agentSessions, cycle)
		sleepCtx(ctx, time.Second)
	}
	return phases, leftovers, nil
}

// homeSessions creates the bridges' hand-made sessions.
func (r *restartRun) homeSessions(ctx context.Context, o *ops, b *board, n int) ([]*kanban.Session, []string, error) {
	var homes []*kanban.Session
	var tokens []string
	for i := range n {
		sess, tok, err := handSession(ctx, o, b, fmt.Sprintf("restart bridge %d", i))
		if err != nil {
			return nil, nil, err
		}
		homes, tokens = append(homes, sess), append(tokens, tok)
	}
	return homes, tokens, nil
}

// startAgents starts mock agents, agent i on a subtask of bridge i's task
// (so that bridge may message it): even ones stay mid-turn (sleeping),
// odd ones go idle after their first turn.
func (r *restartRun) startAgents(ctx context.Context, o *ops, b *board, homes []*kanban.Session, n int) ([]string, error) {
	prof, err := mockProfile(ctx, o)
	if err != nil {
		return nil, err
	}
	var ids []string
	for i := range n {
		prompt := fmt.Sprintf("Agent %d.\n@say working\n", i)
		if i%2 == 0 {
			prompt += "@sleep 60000\n"
		}
		out, err := agentTask(ctx, o, b, prof, homes[i%len(homes)].TaskID, fmt.Sprintf("restart agent %d", i), prompt)
		if err != nil {
			return nil, err
		}
		r.agentTs = append(r.agentTs, out.Task.ID)
		ids = append(ids, out.SessionID)
	}
	for i, id := range ids {
		want := kanban.SessionIdle
		if i%2 == 0 {
			want = kanban.SessionRunning
		}
		if s, ok := waitSession(ctx, o, id, 30*time.Second, func(s *kanban.Session) bool { return s.State == want }); !ok {
			return nil, fmt.Errorf("agent %d: session %s, want %s (%s)", i, s.State, want, s.Error)
		}
	}
	return ids, nil
}

// attachBridges attaches a bridge to each hand-made session.
func (r *restartRun) attachBridges(ctx context.Context, env *Env, dir string, homes []*kanban.Session, tokens []string) ([]*mcpConn, error) {
	logw, err := logFile(dir, "bridges")
	if err != nil {
		return nil, err
	}
	var out []*mcpConn
	for i, sess := range homes {
		m, err := bridgeMCP(ctx, env.KandevBin, r.srv, sess.ID, tokens[i], logw)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

// restartOnce stops the backend (SIGTERM on even cycles, SIGKILL on odd
// ones), keeps it down for the outage, and starts it again. It returns
// agent processes of the old backend that outlived it (killed by pid).
func (r *restartRun) restartOnce(ctx context.Context, cfg RestartConfig, cycle int) ([]int, error) {
	olds := descendants(r.srv.pid())
	r.cycle.Add(1)
	r.down.Store(true)
	if cycle%2 == 0 {
		r.srv.stop(20 * time.Second)
	} else {
		r.srv.kill()
	}
	sleepCtx(ctx, cfg.Outage)
	left := waitGone(olds, 10*time.Second)
	if err := r.srv.restart(ctx); err != nil {
		return left, fmt.Errorf("restart %d: %w", cycle, err)
	}
	r.upAt.Store(time.Now().UnixNano())
	r.down.Store(false)
	return left, nil
}
