package agent

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// Bounds on what an agent's broken output may cost.
const (
	// maxNonACPLines is how many stdout lines that are not ACP messages an
	// agent may write before its session fails (a few stray lines, such
	// as a package manager's warnings, are tolerated).
	maxNonACPLines = 1000
	// maxACPLogs is how many ACP diagnostics one run logs; the rest are
	// counted, so a flooding agent cannot flood the backend's log.
	maxACPLogs = 20
)

// runLog is the ACP library's logger for one run: messages without their
// attributes (they may hold agent output), at most maxACPLogs of them,
// and a count of the non-ACP lines the agent wrote, which fails the run
// past maxNonACPLines.
type runLog struct {
	next slog.Handler
	r    *run

	mu      sync.Mutex
	logged  int
	nonACP  int
	dropped int
}

func newRunLog(next slog.Handler, r *run) *slog.Logger {
	return slog.New(&runLog{next: next, r: r})
}

// Enabled is true from warnings up whatever the backend logs: the
// non-ACP lines are counted even when nothing is logged.
func (h *runLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *runLog) Handle(ctx context.Context, rec slog.Record) error {
	h.mu.Lock()
	if strings.Contains(rec.Message, "failed to parse incoming message") || strings.Contains(rec.Message, "neither id nor method") {
		h.nonACP++
		if h.nonACP == maxNonACPLines {
			h.r.abort(errNonACP)
		}
	}
	h.logged++
	logIt, last := h.logged <= maxACPLogs, h.logged == maxACPLogs
	if !logIt {
		h.dropped++
	}
	h.mu.Unlock()
	if !logIt || !h.next.Enabled(ctx, rec.Level) {
		return nil
	}
	if err := h.next.Handle(ctx, rec); err != nil || !last {
		return err
	}
	note := slog.NewRecord(rec.Time, slog.LevelWarn, "acp: further diagnostics of session "+h.r.id+" are not logged (limit "+
		strconv.Itoa(maxACPLogs)+")", 0)
	return h.next.Handle(ctx, note)
}

func (h *runLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *runLog) WithGroup(string) slog.Handler      { return h }
