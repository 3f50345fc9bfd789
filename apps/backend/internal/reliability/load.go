package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// LoadConfig sizes the load scenario: Clients concurrent clients (split
// over /mcp, the WebSocket API and `kandev mcp` bridges) each making
// Calls mixed calls.
type LoadConfig struct {
	Clients int
	Calls   int
}

// reviewWIP is the wip_limit the load puts on the Review step.
const reviewWIP = 6

// loadRun is the shared state of one load run.
type loadRun struct {
	srv   *server
	ops   *ops
	board *board
	// homes are the bridges' sessions (hand-made, no agent).
	homes []*kanban.Session

	mu    sync.Mutex
	acks  []ack
	asked int
	// dedup counts external_id retries that returned the first task.
	dedup, dedupBad int
}

func (l *loadRun) acked(id, title string) {
	l.mu.Lock()
	l.acks = append(l.acks, ack{id: id, title: title})
	l.mu.Unlock()
}

// RunLoad is the load scenario.
func RunLoad(ctx context.Context, env *Env, cfg LoadConfig) Scenario {
	sc := newScenario("load", "Load: mixed calls over /mcp, the WebSocket API and kandev mcp bridges",
		"concurrent clients making create, list, move, update, message, question ask/answer and mode-switch calls",
		fmt.Sprintf("%d clients × %d calls", cfg.Clients, cfg.Calls))
	dir, err := env.dir("load")
	if err != nil {
		return sc.fail(err)
	}
	srv, err := startServer(ctx, serverSpec{bin: env.KandevBin, dataDir: dir + "/data", logDir: dir, name: "serve", args: []string{"--launch-agents=false"}})
	if err != nil {
		return sc.fail(err)
	}
	defer srv.close()
	l := &loadRun{srv: srv}
	if l.ops, err = dialOps(ctx, srv, false); err != nil {
		return sc.fail(err)
	}
	defer l.ops.close()
	if l.board, err = loadBoard(ctx, l.ops); err != nil {
		return sc.fail(err)
	}
	if err := setWIP(ctx, l.ops, l.board.step("Review").ID, reviewWIP); err != nil {
		return sc.fail(err)
	}
	nMCP, nWS := cfg.Clients/3, cfg.Clients/3
	nBridge := cfg.Clients - nMCP - nWS
	workers, closeAll, err := l.connect(ctx, env, dir, nMCP, nWS, nBridge)
	defer closeAll()
	if err != nil {
		return sc.fail(err)
	}
	env.logf("load: %d /mcp, %d WebSocket, %d bridge clients × %d calls", nMCP, nWS, nBridge, cfg.Calls)
	tallies := map[string]*tally{"mcp": newTally(), "websocket": newTally(), "bridge": newTally(), "answerer": newTally()}
	actx, stopAnswerer := context.WithCancel(ctx)
	var answers sync.WaitGroup
	answers.Go(func() { answerer(actx, l.ops, l.board.workspaceID, tallies["answerer"]) })
	t0 := time.Now()
	l.drive(ctx, workers, cfg.Calls, tallies)
	elapsed := time.Since(t0)
	stopAnswerer()
	answers.Wait()
	total := 0
	for _, k := range []string{"mcp", "websocket", "bridge", "answerer"} {
		total += sc.calls(k, tallies[k], false).Calls
	}
	sc.s.Figures["calls_per_sec"] = float64(total) / elapsed.Seconds()
	closeAll()
	l.ops.close()
	if !srv.stop(15 * time.Second) {
		sc.checkf("graceful stop", false, "kandev serve did not stop within 15 s of SIGTERM")
	}
	l.verify(ctx, sc, dir+"/data")
	return sc.done()
}

// drive runs calls calls on every worker at once, each worker's mix
// seeded by its index, and returns when all are done.
func (l *loadRun) drive(ctx context.Context, workers []*worker, calls int, tallies map[string]*tally) {
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 18)) //nolint:gosec // a reproducible mix, not a secret
			for n := range calls {
				if ctx.Err() != nil {
					return
				}
				w.op(ctx, l, rng, n, tallies[w.kind])
			}
		})
	}
	wg.Wait()
}

// verify checks the database after the run.
func (l *loadRun) verify(ctx context.Context, sc *scenarioRun, dataDir string) {
	inStore(ctx, sc, dataDir, func(db *sql.DB) {
		lost, err := checkAcks(ctx, db, l.acks)
		if err != nil {
			sc.checkf("every acknowledged create exists exactly once", false, "%v", err)
			return
		}
		sc.s.WritesChecked, sc.s.Lost = len(l.acks), lost
		sc.checkf("every acknowledged create exists exactly once", lost == 0, "%d acknowledged, %d missing or duplicated", len(l.acks), lost)
		n, err := countLike(ctx, db, "load ")
		sc.checkf("no unacknowledged create applied", err == nil && n == len(l.acks), "%d load tasks in the database, %d acknowledged", n, len(l.acks))
		sc.checkf("a retried create with external_id deduplicates", l.dedupBad == 0, "%d retries returned the first task, %d did not", l.dedup, l.dedupBad)
		sc.check(positionsDense(ctx, db))
		if n, err := scalar(ctx, db, `SELECT MAX(c) FROM (SELECT COUNT(*) AS c FROM tasks GROUP BY workflow_step_id)`); err == nil {
			sc.s.Figures["largest_step_tasks"] = float64(n)
			sc.s.Notes = append(sc.s.Notes, fmt.Sprintf("Positions within a step are dense (0..n-1) ranks of sparse sort keys, "+
				"so a move to an explicit position writes the moved task alone, whatever the step holds (up to %d tasks in a step "+
				"here); only a move that finds no room between its neighbours' keys renumbers the step, in the same transaction. "+
				"The bridges' calls include ask_user_question_kandev, whose latency is the wait for the answer.", n))
		}
		sc.check(wipHeld(ctx, db))
		pending, err := scalar(ctx, db, `SELECT COUNT(*) FROM questions WHERE state = 'pending'`)
		answered, err2 := scalar(ctx, db, `SELECT COUNT(*) FROM questions WHERE state = 'answered'`)
		sc.checkf("every question asked was answered once", err == nil && err2 == nil && pending == 0 && answered == l.asked,
			"%d asked, %d answered, %d pending", l.asked, answered, pending)
	})
}

// worker is one load client.
type worker struct {
	kind string // mcp | websocket | bridge
	idx  int
	mcp  *mcpConn
	ws   *ops
	home *kanban.Session // bridge: its session
	// mine are tasks this worker created (it moves and updates them).
	mine []string
}

// connect opens every client. closeAll closes whatever was opened.
func (l *loadRun) connect(ctx context.Context, env *Env, dir string, nMCP, nWS, nBridge int) ([]*worker, func(), error) {
	var ws []*worker
	var once sync.Once
	closeAll := func() {
		once.Do(func() {
			for _, w := range ws {
				if w.mcp != nil {
					w.mcp.close()
				}
				if w.ws != nil {
					w.ws.close()
				}
			}
		})
	}
	logw, err := logFile(dir, "bridges")
	if err != nil {
		return nil, closeAll, err
	}
	for range nMCP {
		m, err := externalMCP(ctx, l.srv)
		if err != nil {
			return ws, closeAll, err
		}
		ws = append(ws, &worker{kind: "mcp", idx: len(ws), mcp: m})
	}
	for range nWS {
		o, err := dialOps(ctx, l.srv, false)
		if err != nil {
			return ws, closeAll, err
		}
		ws = append(ws, &worker{kind: "websocket", idx: len(ws), ws: o})
	}
	for i := range nBridge {
		sess, tok, err := handSession(ctx, l.ops, l.board, fmt.Sprintf("home %d", i))
		if err != nil {
			return ws, closeAll, err
		}
		m, err := bridgeMCP(ctx, env.KandevBin, l.srv, sess.ID, tok, logw)
		if err != nil {
			return ws, closeAll, err
		}
		l.homes = append(l.homes, sess)
		ws = append(ws, &worker{kind: "bridge", idx: len(ws), mcp: m, home: sess})
	}
	return ws, closeAll, nil
}

// op makes the n-th call of a worker: a create one call in three, then
// lists, moves, updates and the transport's own calls.
func (w *worker) op(ctx context.Context, l *loadRun, rng *rand.Rand, n int, tl *tally) {
	r := rng.IntN(10)
	if len(w.mine) == 0 {
		r = 0
	}
	t0 := time.Now()
	var oc Outcome
	var d string
	switch {
	case r < 3:
		oc, d = w.create(ctx, l, n)
	case r < 5:
		oc, d = w.list(ctx, l)
	case r < 7:
		oc, d = w.move(ctx, l, rng)
	case r < 8:
		oc, d = w.update(ctx, l, rng, n)
	default:
		oc, d = w.special(ctx, l, rng, n)
	}
	tl.add(time.Since(t0), oc, d)
}

func (w *worker) title(n int) string {
	return fmt.Sprintf("load %s %d call %d", w.kind, w.idx, n)
}

func (w *worker) create(ctx context.Context, l *loadRun, n int) (Outcome, string) {
	title := w.title(n)
	var out action.TaskCreateOut
	var err error
	no := false
	switch w.kind {
	case "websocket":
		err = w.ws.call(ctx, kanban.ActionTaskCreate, action.TaskCreateIn{WorkspaceID: l.board.workspaceID, Title: title, StartAgent: &no}, &out)
	case "mcp":
		args := map[string]any{"title": title, "workspace_id": l.board.workspaceID, "start_agent": false, "external_id": title}
		if err = w.mcp.call(ctx, "create_task_kandev", args, &out); err == nil && n%10 == 0 {
			// The same call again, as a client that lost the reply would retry.
			var again action.TaskCreateOut
			if w.mcp.call(ctx, "create_task_kandev", args, &again) == nil && again.Deduplicated && again.Task.ID == out.Task.ID {
				l.mu.Lock()
				l.dedup++
				l.mu.Unlock()
			} else {
				l.mu.Lock()
				l.dedupBad++
				l.mu.Unlock()
			}
		}
	default:
		err = w.mcp.call(ctx, "create_task_kandev", map[string]any{"title": title, "parent_id": "self", "start_agent": false}, &out)
	}
	if err == nil {
		l.acked(out.Task.ID, title)
		w.mine = append(w.mine, out.Task.ID)
	}
	return w.classify(err)
}

func (w *worker) classify(err error, refused ...kanban.Code) (Outcome, string) {
	if w.kind == "websocket" {
		return classifyErr(err, refused...)
	}
	return classifyMCP(err, refused...)
}

func (w *worker) list(ctx context.Context, l *loadRun) (Outcome, string) {
	var page kanban.List[kanban.Task]
	if w.kind == "websocket" {
		return w.classify(w.ws.call(ctx, kanban.ActionTaskList, action.TaskListIn{WorkspaceID: l.board.workspaceID, Limit: 20}, &page))
	}
	return w.classify(w.mcp.call(ctx, "list_tasks_kandev", map[string]any{"limit": 20}, &page))
}

func (w *worker) move(ctx context.Context, l *loadRun, rng *rand.Rand) (Outcome, string) {
	id := w.mine[rng.IntN(len(w.mine))]
	step := l.board.steps[rng.IntN(len(l.board.steps))].ID
	pos := rng.IntN(4)
	if w.kind == "websocket" {
		return w.classify(w.ws.call(ctx, kanban.ActionTaskMove, action.TaskMoveIn{TaskID: id, WorkflowStepID: step, Position: &pos}, nil), kanban.CodeConflict)
	}
	return w.classify(w.mcp.call(ctx, "move_task_kandev", map[string]any{"task_id": id, "workflow_step_id": step, "position": pos}, nil), kanban.CodeConflict)
}

func (w *worker) update(ctx context.Context, _ *loadRun, rng *rand.Rand, n int) (Outcome, string) {
	id := w.mine[rng.IntN(len(w.mine))]
	prompt := fmt.Sprintf("updated by call %d", n)
	switch w.kind {
	case "websocket":
		return w.classify(w.ws.call(ctx, kanban.ActionTaskUpdate, action.TaskUpdateIn{TaskID: id, Description: &prompt}, nil))
	case "mcp":
		states := []string{"TODO", "IN_PROGRESS", "REVIEW", "BLOCKED"}
		return w.classify(w.mcp.call(ctx, "update_task_state_kandev", map[string]any{"task_id": id, "state": states[rng.IntN(len(states))]}, nil))
	}
	return w.classify(w.mcp.call(ctx, "update_task_kandev", map[string]any{"task_id": id, "prompt": prompt}, nil))
}

// special is each transport's own call: a message to a bridge's task and
// a mode switch (WebSocket), a question (bridge), an answer (/mcp).
func (w *worker) special(ctx context.Context, l *loadRun, rng *rand.Rand, n int) (Outcome, string) {
	switch w.kind {
	case "websocket":
		home := l.homes[rng.IntN(len(l.homes))]
		if n%2 == 0 {
			return w.classify(w.ws.call(ctx, kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: home.TaskID, Prompt: fmt.Sprintf("note %d", n)}, nil))
		}
		mode := kanban.ModeTask
		if rng.IntN(2) == 0 {
			mode = kanban.ModeTaskTitlePending
		}
		return w.classify(w.ws.call(ctx, kanban.ActionSessionSetMode, action.SetModeIn{ID: home.ID, Mode: mode}, nil))
	case "bridge":
		l.mu.Lock()
		l.asked++
		l.mu.Unlock()
		q := map[string]any{"prompt": fmt.Sprintf("Proceed with step %d?", n), "options": []any{
			map[string]any{"label": "yes", "description": "go on"}, map[string]any{"label": "no", "description": "stop"}}}
		var out struct {
			Status string `json:"status"`
		}
		err := w.mcp.call(ctx, "ask_user_question_kandev", map[string]any{"questions": []any{q}, "timeout_seconds": 25}, &out)
		if err == nil && out.Status != "answered" {
			return OutcomeFailed, "question came back " + out.Status
		}
		return w.classify(err)
	}
	var page struct {
		Items []kanban.Question `json:"items"`
	}
	if err := w.mcp.call(ctx, "list_pending_questions_kandev", map[string]any{"limit": 5}, &page); err != nil || len(page.Items) == 0 {
		return w.classify(err)
	}
	q := page.Items[0]
	answers := []any{}
	for _, item := range q.Questions {
		answers = append(answers, map[string]any{"question_id": item.ID, "selected_options": []string{item.Options[0].OptionID}})
	}
	return w.classify(w.mcp.call(ctx, "answer_question_kandev", map[string]any{"pending_id": q.ID, "answers": answers}, nil))
}
