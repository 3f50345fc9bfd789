package agent

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// errBroken ends a run whose ACP connection closed while its process still
// runs: the agent wrote a line over the ACP limit (10 MiB), sent
// notifications faster than they could be handled, or closed its stdout.
var errBroken = errors.New("the agent's ACP connection broke (a line over 10 MiB, a flood of notifications faster " +
	"than they could be recorded, or its output closed); Kandev stopped the agent")

// errNonACP ends a run whose agent writes stdout lines that are not ACP
// messages (each one also costs a log line).
var errNonACP = errors.New("the agent wrote " + strconv.Itoa(maxNonACPLines) +
	" lines on stdout that are not ACP messages; Kandev stopped it")

// abort fails the run at once for err (the first reason wins): the turn in
// progress is abandoned, or the idle wait ends.
func (r *run) abort(err error) {
	r.setFailure(err.Error())
	r.abortOnce.Do(func() { close(r.aborted) })
}

// errAborted reports a turn abandoned by abort (the reason is recorded).
var errAborted = errors.New("aborted")

// silentError ends a turn in which the agent sent nothing for too long.
type silentError struct{ d time.Duration }

func (e silentError) Error() string {
	return fmt.Sprintf("the agent sent no ACP message for %s during a turn (--agent-silence-timeout); Kandev stopped it", e.d)
}

// seen notes that the agent just did something (any ACP message).
func (r *run) seen() { r.lastSeen.Store(time.Now().UnixNano()) }

// silentFor is how long ago the agent last did something.
func (r *run) silentFor() time.Duration {
	return time.Since(time.Unix(0, r.lastSeen.Load()))
}

// watchTurn fires when the turn in progress must be abandoned: the agent
// has been silent for SilenceTimeout while nobody was waited for (an
// open question or permission is a reason to be quiet), or its ACP
// connection closed. It stops watching when done is closed.
func (r *run) watchTurn(conn *acp.ClientSideConnection, done <-chan struct{}) <-chan error {
	out := make(chan error, 1)
	limit := r.m.cfg.SilenceTimeout
	tick := time.NewTicker(min(max(limit/8, 10*time.Millisecond), time.Second))
	go func() {
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-conn.Done():
				out <- errBroken
				return
			case <-r.aborted:
				out <- errAborted
				return
			case <-tick.C:
				r.turn.mu.Lock()
				waiting := r.turn.waits > 0
				r.turn.mu.Unlock()
				if waiting {
					r.seen()
				} else if r.silentFor() > limit {
					out <- silentError{d: limit}
					return
				}
			}
		}
	}()
	return out
}

// setFailure records why the run must end as FAILED; the first reason wins.
func (r *run) setFailure(reason string) {
	r.turn.mu.Lock()
	defer r.turn.mu.Unlock()
	if r.turn.failure == "" {
		r.turn.failure = reason
	}
}

func (r *run) failureReason() string {
	r.turn.mu.Lock()
	defer r.turn.mu.Unlock()
	return r.turn.failure
}

// connBroken reports whether the run's ACP connection has closed.
func connBroken(conn *acp.ClientSideConnection) bool {
	select {
	case <-conn.Done():
		return true
	default:
		return false
	}
}

// exitsSoon reports whether the agent process exits within a second: a
// connection that closed because the agent exited is no broken one (the
// exit code then says how the session ended).
func exitsSoon(p *process) bool {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}
