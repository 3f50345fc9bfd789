package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var (
	faultOnce sync.Once
	faultBin  string
	faultErr  error
)

// faultAgent builds the reliability suite's misbehaving ACP agent once.
func faultAgent(t *testing.T) string {
	t.Helper()
	faultOnce.Do(func() {
		// Built once per test process, outliving any one test's TempDir.
		dir, err := os.MkdirTemp("", "kandev-faultagent-")
		if err != nil {
			faultErr = err
			return
		}
		faultBin = filepath.Join(dir, "faultagent")
		if out, err := exec.Command("go", "build", "-o", faultBin, "../reliability/faultagent").CombinedOutput(); err != nil {
			faultErr = err
			faultBin = string(out)
		}
	})
	if faultErr != nil {
		t.Fatalf("build faultagent: %v: %s", faultErr, faultBin)
	}
	return faultBin
}

// TestAgentSilentTurnFails is the regression test for an agent that hangs
// in a turn: its session stayed RUNNING forever. Now a turn with no ACP
// message for the silence timeout fails the session with the reason, and
// the agent is stopped. (The mock agent's @sleep is such a silent turn.)
func TestAgentSilentTurnFails(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t, func(c *Config) { c.Agents.SilenceTimeout = 500 * time.Millisecond })
	_, id := e.startMock("Silent", "@sleep 60000", nil)
	s := e.waitState(id, kanban.SessionFailed)
	if !strings.Contains(s.Error, "sent no ACP message for 500ms during a turn") {
		t.Fatalf("got error %q, want the silence reason", s.Error)
	}
}

// TestAgentBrokenConnectionFails is the regression test for an agent whose
// ACP connection breaks mid-turn (here: a 20 MiB line, over the 10 MiB
// limit): the session went IDLE on a dead connection and every later
// prompt failed. Now it fails with the reason and the agent is stopped.
func TestAgentBrokenConnectionFails(t *testing.T) {
	t.Parallel()
	bin := faultAgent(t)
	e := newAgentEnv(t, withAgentCommands(t, map[string]any{"mock-agent": map[string]any{"command": bin}}))
	_, id := e.startMock("Broken", "@huge-line", nil)
	s := e.waitState(id, kanban.SessionFailed)
	if !strings.Contains(s.Error, "ACP connection broke") {
		t.Fatalf("got error %q, want the broken-connection reason", s.Error)
	}
}

// TestAgentInterruptResendsCancel is the regression test for an interrupt
// whose session/cancel reached the agent before the turn's prompt did (a
// race seen under load): the agent never saw a cancel for its turn, and the
// interrupt waited out its 15 s grace. The runtime now repeats
// session/cancel every second until the turn ends; this agent ends its turn
// only at the second cancel, as one that lost the first would.
func TestAgentInterruptResendsCancel(t *testing.T) {
	t.Parallel()
	bin := faultAgent(t)
	e := newAgentEnv(t, withAgentCommands(t, map[string]any{"mock-agent": map[string]any{"command": bin}}))
	task, sid := e.startMock("Interrupt", "@cancel-twice", nil)
	e.waitState(sid, kanban.SessionRunning)
	start := time.Now()
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, SessionID: sid, Prompt: "@cancel-twice", DeliveryMode: "interrupt"}, nil)
	e.waitMessage(task.ID, "status", "cancelled")
	// The grace is 15 s; a resent cancel ends the turn about a second in.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the interrupted turn ended after %s, want the resent cancel to end it", d)
	}
}

// TestAgentNonACPOutputFails is the regression test for an agent that
// floods stdout with lines that are not ACP messages: each one cost the
// backend an error log line (336,726 lines, 29 MB, in 3 s), until the
// turn's silence timeout 30 minutes later. Now the session fails after
// 1000 such lines and at most 20 ACP diagnostics are logged per session.
func TestAgentNonACPOutputFails(t *testing.T) {
	t.Parallel()
	bin := faultAgent(t)
	e := newAgentEnv(t, withAgentCommands(t, map[string]any{"mock-agent": map[string]any{"command": bin}}))
	_, id := e.startMock("Garbage", "@flood-stdout", nil)
	s := e.waitState(id, kanban.SessionFailed)
	if !strings.Contains(s.Error, "lines on stdout that are not ACP messages") {
		t.Fatalf("got error %q, want the non-ACP output reason", s.Error)
	}
	if n := strings.Count(e.logs.String(), `msg="acp: `); n > 21 {
		t.Fatalf("got %d ACP log lines for one session, want at most 21", n)
	}
}
