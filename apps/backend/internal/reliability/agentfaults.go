package reliability

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// AgentFaultsConfig configures the agent-faults scenario. FaultAgent is
// the faultagent binary (internal/reliability/faultagent).
type AgentFaultsConfig struct {
	FaultAgent string
	FloodMiB   int
}

// Bounds of the agent-faults scenario, from the runtime's documented
// limits and the timeouts the scenario sets.
const (
	agentSilence   = 3 * time.Second // --agent-silence-timeout for the run
	agentStart     = 3 * time.Second // --agent-start-timeout for the run
	agentEndBound  = 30 * time.Second
	recordLimitMiB = 8.5  // 8 MiB recorded per session, plus notes
	agentRSSMiB    = 96.0 // server memory for all faulty agents at once
)

// agentFault is one misbehaving agent and what must become of it.
type agentFault struct {
	name, prompt string
	codex        bool // run as the codex agent type (--hang-initialize)
	stop         bool // the operator stops it once it runs
	want         kanban.SessionState
	reason       string // in the session's error
}

// RunAgentFaults is the agent-faults scenario.
func RunAgentFaults(ctx context.Context, env *Env, cfg AgentFaultsConfig) Scenario {
	sc := newScenario("agent-faults", "Agent faults: floods, hangs, broken ACP, ignored SIGTERM",
		"agents that flood session updates, stdout or stderr, write a line over the ACP limit, hang in a turn or at initialize, or ignore SIGTERM",
		fmt.Sprintf("7 faulty agents at once, %d MiB floods", cfg.FloodMiB))
	dir, err := env.dir("agent-faults")
	if err != nil {
		return sc.fail(err)
	}
	data := filepath.Join(dir, "data")
	if err := writeAgentsFile(data, cfg.FaultAgent); err != nil {
		return sc.fail(err)
	}
	srv, err := startServer(ctx, serverSpec{bin: env.KandevBin, dataDir: data, logDir: dir, name: "serve",
		args: []string{"--max-agents", "16", "--agent-silence-timeout", agentSilence.String(), "--agent-start-timeout", agentStart.String()}})
	if err != nil {
		return sc.fail(err)
	}
	defer srv.close()
	o, err := dialOps(ctx, srv, false)
	if err != nil {
		return sc.fail(err)
	}
	defer o.close()
	faults := []agentFault{
		{name: "floods session updates", prompt: fmt.Sprintf("@flood-updates %d", cfg.FloodMiB), want: kanban.SessionIdle},
		{name: "floods stdout with non-ACP lines", prompt: "@flood-stdout", want: kanban.SessionFailed, reason: "not ACP messages"},
		{name: "writes a line over the ACP limit", prompt: "@huge-line", want: kanban.SessionFailed, reason: "ACP connection"},
		{name: "floods stderr and exits", prompt: fmt.Sprintf("@flood-stderr %d", cfg.FloodMiB), want: kanban.SessionFailed, reason: "exited with code 3"},
		{name: "hangs in a turn without output", prompt: "@hang", want: kanban.SessionFailed, reason: "sent no ACP message"},
		{name: "hangs at initialize", prompt: "@hang", codex: true, want: kanban.SessionFailed, reason: "did not answer initialize"},
		{name: "ignores SIGTERM when stopped", prompt: "@ignore-term", stop: true, want: kanban.SessionCancelled},
	}
	peak := &peakRSS{pid: srv.pid()}
	base := rssMiB(srv.pid())
	stopPeak := peak.watch()
	ids, err := startFaults(ctx, o, faults)
	if err != nil {
		stopPeak()
		return sc.fail(err)
	}
	t0 := time.Now()
	for _, stop := range []bool{true, false} { // the ones to stop first, while they run
		for i, f := range faults {
			if f.stop == stop {
				checkFault(ctx, sc, o, f, ids[i], t0)
			}
		}
	}
	// The flooding agent is alive and idle, as it should be: stop it too.
	if err := o.call(ctx, kanban.ActionSessionStop, action.SessionStopIn{ID: ids[0], Reason: "reliability: done"}, nil); err != nil {
		sc.checkf("stop the idle flooding agent", false, "%v", err)
	}
	stopPeak()
	sc.s.Figures["rss_base_mib"], sc.s.Figures["rss_peak_mib"] = base, peak.max()
	sc.checkf("server memory bounded while agents misbehave", peak.max()-base <= agentRSSMiB,
		"server RSS %.0f MiB before, %.0f MiB at the peak (bound +%.0f MiB)", base, peak.max(), agentRSSMiB)
	checkLog(sc, filepath.Join(dir, "serve.log"))
	left := waitGone(descendants(srv.pid()), 10*time.Second)
	sc.checkf("no faulty agent process left", len(left) == 0, "%d processes left once every session ended", len(left))
	o.close()
	srv.stop(15 * time.Second)
	verifyRecorded(ctx, sc, data, ids[0])
	return sc.done()
}

// writeAgentsFile points the mock-agent and codex agent types at the
// fault agent (codex hangs at initialize).
func writeAgentsFile(dataDir, faultAgent string) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(map[string]any{
		"mock-agent": map[string]any{"command": faultAgent},
		"codex":      map[string]any{"command": faultAgent, "args": []string{"--hang-initialize"}},
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dataDir, "agents.json"), b, 0o600)
}

// startFaults starts one task per fault and returns their session ids.
func startFaults(ctx context.Context, o *ops, faults []agentFault) ([]string, error) {
	b, err := loadBoard(ctx, o)
	if err != nil {
		return nil, err
	}
	mock, err := mockProfile(ctx, o)
	if err != nil {
		return nil, err
	}
	codex, err := profileOf(ctx, o, "codex")
	if err != nil {
		return nil, err
	}
	var ids []string
	for i, f := range faults {
		prof := mock
		if f.codex {
			prof = codex
		}
		out, err := agentTask(ctx, o, b, prof, "", fmt.Sprintf("fault %d", i), f.prompt)
		if err != nil {
			return nil, err
		}
		ids = append(ids, out.SessionID)
	}
	return ids, nil
}

// checkFault waits for the fault's session to settle and checks its state
// and reason; a fault to stop is stopped once it runs.
func checkFault(ctx context.Context, sc *scenarioRun, o *ops, f agentFault, id string, t0 time.Time) {
	if f.stop {
		waitSession(ctx, o, id, agentEndBound, func(s *kanban.Session) bool { return s.State == kanban.SessionRunning })
		sleepCtx(ctx, 300*time.Millisecond) // let it reach its SIGTERM handler
		t0 = time.Now()
		if err := o.call(ctx, kanban.ActionSessionStop, action.SessionStopIn{ID: id, Reason: "reliability: stop an agent that ignores SIGTERM"}, nil); err != nil {
			sc.checkf("agent "+f.name, false, "session.stop: %v", err)
			return
		}
	}
	s, ok := waitSession(ctx, o, id, agentEndBound, func(s *kanban.Session) bool {
		return s.State == f.want
	})
	took := time.Since(t0)
	reasonOK := f.reason == "" || strings.Contains(s.Error, f.reason)
	sc.checkf("agent "+f.name, ok && reasonOK, "session %s %.1f s after the start (or the stop) (want %s%s); error: %s",
		s.State, took.Seconds(), f.want, quoteIf(f.reason), kanban.Clip(firstLine(s.Error), 160))
}

func quoteIf(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf(", reason %q", s)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// profileOf is an agent type's default profile id.
func profileOf(ctx context.Context, o *ops, agentName string) (string, error) {
	var agents kanban.List[kanban.Agent]
	if err := o.call(ctx, kanban.ActionAgentList, action.ListIn{}, &agents); err != nil {
		return "", err
	}
	for _, a := range agents.Items {
		if a.Name == agentName {
			var profs kanban.List[kanban.AgentProfile]
			if err := o.call(ctx, kanban.ActionAgentProfileList, action.AgentProfileListIn{AgentID: a.ID}, &profs); err != nil || len(profs.Items) == 0 {
				return "", fmt.Errorf("agent.profile.list %s: %w (or no profile)", agentName, err)
			}
			return profs.Items[0].ID, nil
		}
	}
	return "", fmt.Errorf("no agent %s", agentName)
}

// verifyRecorded checks the flooding session's conversation stayed within
// the recording limit.
func verifyRecorded(ctx context.Context, sc *scenarioRun, dataDir, sessionID string) {
	inStore(ctx, sc, dataDir, func(db *sql.DB) {
		n, err := scalar(ctx, db, `SELECT COALESCE(SUM(LENGTH(content)), 0) FROM session_messages WHERE session_id = ?`, sessionID)
		mib := float64(n) / (1 << 20)
		sc.s.Figures["flood_recorded_mib"] = mib
		sc.checkf("a flood is recorded up to the limit only", err == nil && mib <= recordLimitMiB,
			"%.1f MiB of the flooding session's conversation stored (limit %.1f MiB)", mib, recordLimitMiB)
	})
}

// maxACPLogLines bounds the ACP diagnostics the backend may log for the
// scenario's agents (the runtime logs at most 20 per session, plus a note).
const maxACPLogLines = 7 * 21

// checkLog checks the faulty agents did not flood the backend's log.
func checkLog(sc *scenarioRun, path string) {
	b, err := os.ReadFile(path)
	n := strings.Count(string(b), "msg=\"acp: ")
	sc.s.Figures["acp_log_lines"] = float64(n)
	sc.checkf("the backend's log stays bounded", err == nil && n <= maxACPLogLines,
		"%d ACP diagnostic lines logged for all the faulty agents (bound %d); the log is %.1f MiB", n, maxACPLogLines, float64(len(b))/(1<<20))
}
