package reliability

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// bridgeWorker is one bridge's client loop state.
type bridgeWorker struct {
	r         *restartRun
	m         *mcpConn
	i         int
	recovered int32 // last cycle after which a call succeeded
	phases    map[string]*tally
}

// phase is "before" the first restart, "outage" while the backend is down
// or this bridge has not had a call succeed since, then "after". A call
// that overlaps a restart counts in the outage.
func (w *bridgeWorker) phase() (string, int32) {
	cyc := w.r.cycle.Load()
	switch {
	case cyc == 0:
		return "before", cyc
	case w.r.down.Load() || w.recovered < cyc:
		return "outage", cyc
	}
	return "after", cyc
}

// call makes one call and records it in its phase.
func (w *bridgeWorker) call(ctx context.Context, tool string, args, out any) (Outcome, string) {
	phase, cyc := w.phase()
	t0 := time.Now()
	oc, d := classifyMCP(w.m.call(ctx, tool, args, out))
	lat := time.Since(t0)
	if w.r.cycle.Load() != cyc || w.r.down.Load() {
		phase = "outage" // the backend went down while the call was in flight
	}
	w.phases[phase].add(lat, oc, d)
	if phase == "outage" {
		w.r.mu.Lock()
		w.r.outageMax = max(w.r.outageMax, lat)
		w.r.mu.Unlock()
		if oc == OutcomeOK && !w.r.down.Load() {
			w.recovered = cyc
			w.r.mu.Lock()
			w.r.reattach = append(w.r.reattach, time.Since(time.Unix(0, w.r.upAt.Load())))
			w.r.mu.Unlock()
		}
	}
	return oc, d
}

// bridgeLoop calls until stop: creates (retried with their external_id
// while the backend is unavailable), messages (never retried) and lists.
func (r *restartRun) bridgeLoop(ctx context.Context, m *mcpConn, i int, phases map[string]*tally, stop <-chan struct{}) {
	w := &bridgeWorker{r: r, m: m, i: i, phases: phases}
	for n := 0; ctx.Err() == nil; n++ {
		select {
		case <-stop:
			return
		default:
		}
		switch {
		case n%6 == 0:
			w.create(ctx, fmt.Sprintf("rb %d-%d", i, n))
		case n%6 == 1 && i < len(r.agentTs):
			w.message(ctx, fmt.Sprintf("note %d-%d", i, n))
		default:
			w.call(ctx, "list_tasks_kandev", map[string]any{"limit": 5}, nil)
		}
		sleepCtx(ctx, 10*time.Millisecond)
	}
}

// create makes one logical create, retrying UNAVAILABLE answers with the
// same external_id (at most a minute), as a client should.
func (w *bridgeWorker) create(ctx context.Context, title string) {
	args := map[string]any{"title": title, "parent_id": "self", "start_agent": false, "external_id": title}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var out action.TaskCreateOut
		oc, _ := w.call(ctx, "create_task_kandev", args, &out)
		switch oc {
		case OutcomeOK:
			w.r.mu.Lock()
			w.r.acks = append(w.r.acks, ack{id: out.Task.ID, title: title})
			w.r.mu.Unlock()
			return
		case OutcomeUnavailable:
			sleepCtx(ctx, 100*time.Millisecond)
		default:
			return
		}
	}
}

// message queues a message to the bridge's agent subtask once: a call
// whose answer was lost is not retried, and must not be replayed either.
func (w *bridgeWorker) message(ctx context.Context, content string) {
	w.r.mu.Lock()
	w.r.tried = append(w.r.tried, content)
	w.r.mu.Unlock()
	if oc, _ := w.call(ctx, "message_task_kandev", map[string]any{"task_id": w.r.agentTs[w.i], "prompt": content}, nil); oc == OutcomeOK {
		w.r.mu.Lock()
		w.r.sent = append(w.r.sent, content)
		w.r.mu.Unlock()
	}
}

// checkAgents waits for the agents to be resumed after a restart: every
// session live and not mid-start, within 60 s.
func (r *restartRun) checkAgents(ctx context.Context, sc *scenarioRun, o *ops, ids []string, cycle int) {
	t0 := time.Now()
	var bad []string
	for _, id := range ids {
		s, ok := waitSession(ctx, o, id, 60*time.Second, func(s *kanban.Session) bool {
			return s.State == kanban.SessionIdle || s.State == kanban.SessionRunning
		})
		if !ok {
			bad = append(bad, fmt.Sprintf("%s %s %s", id[:8], s.State, s.Error))
		}
	}
	sc.s.Figures["resume_ms_max"] = max(sc.s.Figures["resume_ms_max"], ms(time.Since(t0)))
	how := "SIGTERM"
	if cycle%2 == 1 {
		how = "kill -9"
	}
	sc.checkf(fmt.Sprintf("restart %d (%s): running agents resumed", cycle+1, how), len(bad) == 0,
		"%d agent sessions back IDLE or RUNNING; not: %v", len(ids)-len(bad), bad)
}

// checkAttached checks every bridge's session is attached again.
func (r *restartRun) checkAttached(ctx context.Context, sc *scenarioRun, o *ops, homes []*kanban.Session) {
	n := 0
	for _, h := range homes {
		if _, ok := waitSession(ctx, o, h.ID, 10*time.Second, func(s *kanban.Session) bool { return s.MCPAttached }); ok {
			n++
		}
	}
	sc.checkf("bridges re-attached", n == len(homes), "%d of %d bridge sessions attached after the last restart", n, len(homes))
}

// report records the call phases and the client-side bounds.
func (r *restartRun) report(sc *scenarioRun, phases map[string]*tally, leftovers []int) {
	sc.calls("before", phases["before"], false)
	out := sc.calls("outage", phases["outage"], true)
	sc.calls("after", phases["after"], false)
	r.mu.Lock()
	defer r.mu.Unlock()
	worst := time.Duration(0)
	for _, d := range r.reattach {
		worst = max(worst, d)
	}
	sc.s.Figures["reattach_ms_max"] = ms(worst)
	sc.s.Figures["outage_call_ms_max"] = ms(r.outageMax)
	sc.checkf("calls during the outage fail fast with a retryable error", out.Unavailable > 0 && r.outageMax <= failFastBound,
		"%d outage calls answered UNAVAILABLE; slowest outage call %.0f ms (bound %s)", out.Unavailable, ms(r.outageMax), failFastBound)
	sc.checkf("bridges reconnect and re-attach within the bound", len(r.reattach) > 0 && worst <= reattachBound,
		"%d re-attachments; slowest %.0f ms after the backend served again (bound %s)", len(r.reattach), ms(worst), reattachBound)
	sc.checkf("no agent process outlives its backend", len(leftovers) == 0, "%d agent processes left behind by a stopped backend", len(leftovers))
}

// verify checks the database after the last stop.
func (r *restartRun) verify(ctx context.Context, sc *scenarioRun, dataDir string, agentSessions []string) {
	inStore(ctx, sc, dataDir, func(db *sql.DB) {
		lost, err := checkAcks(ctx, db, r.acks)
		total, err2 := countLike(ctx, db, "rb ")
		sc.s.WritesChecked, sc.s.Lost = len(r.acks)+len(r.sent), lost
		sc.checkf("no create applied twice (retries carry external_id)", errors.Join(err, err2) == nil && lost == 0 && total == len(r.acks),
			"%d logical creates acknowledged, %d in the database, %d missing or duplicated", len(r.acks), total, lost)
		replayed, missing := 0, 0
		sent := map[string]bool{}
		for _, c := range r.sent {
			sent[c] = true
		}
		for _, c := range r.tried {
			n, err := scalar(ctx, db, `SELECT COUNT(*) FROM session_messages WHERE content = ?`, c)
			if err != nil || n > 1 {
				replayed++
			}
			if sent[c] && n != 1 {
				missing++
			}
		}
		sc.s.Lost += missing
		sc.checkf("no message replayed, every acknowledged one present", replayed == 0 && missing == 0,
			"%d messages sent (%d acknowledged): %d stored twice, %d acknowledged but missing", len(r.tried), len(r.sent), replayed, missing)
		resumed := 0
		for _, id := range agentSessions {
			n, _ := scalar(ctx, db, `SELECT COUNT(*) FROM session_messages WHERE session_id = ? AND type = 'status'
				AND content LIKE 'Resumed the agent''s session after a backend restart%'`, id)
			if n >= 1 {
				resumed++
			}
		}
		sc.checkf("the conversation records each resume", resumed == len(agentSessions), "%d of %d agent sessions have the resume status message", resumed, len(agentSessions))
	})
}
