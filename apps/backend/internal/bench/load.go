package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// endpoint is an MCP endpoint with a pool of initialized sessions, one per
// concurrent client, reused across load points.
type endpoint struct {
	name     string
	url      string
	token    string
	hc       *http.Client
	sessions []*session
}

// newEndpoint opens n sessions on url.
func newEndpoint(ctx context.Context, name, url, token string, hc *http.Client, n int) (*endpoint, error) {
	e := &endpoint{name: name, url: url, token: token, hc: hc}
	for range n {
		s, err := openSession(ctx, hc, url, token)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		e.sessions = append(e.sessions, s)
	}
	return e, nil
}

// call is one tool call shape.
type call struct {
	tool string
	args json.RawMessage
}

// loadRun is one measured load point.
type loadRun struct {
	calls, errors int
	elapsed       time.Duration
	lat           []time.Duration // sorted
	firstErr      error
	// serverCPU and clientCPU are the CPU time the server process and
	// this process spent during the run (zero when not measured).
	serverCPU, clientCPU time.Duration
}

func (r loadRun) callsPerSec() float64 { return float64(r.calls) / r.elapsed.Seconds() }
func (r loadRun) serverCPUUs() float64 { return perCallUs(r.serverCPU, r.calls) }
func (r loadRun) clientCPUUs() float64 { return perCallUs(r.clientCPU, r.calls) }

func perCallUs(d time.Duration, calls int) float64 {
	if calls == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(calls)
}
func (r loadRun) p50() float64 { return ms(Percentile(r.lat, 50)) }
func (r loadRun) p99() float64 { return ms(Percentile(r.lat, 99)) }

// runLoad has n sessions call c back to back for d, each waiting for its
// answer before the next call (closed loop). Calls in flight at the
// deadline finish and count; elapsed runs until the last one returns.
func runLoad(ctx context.Context, e *endpoint, c call, n int, d time.Duration) (loadRun, error) {
	if n > len(e.sessions) {
		return loadRun{}, fmt.Errorf("%s: %d clients, %d sessions", e.name, n, len(e.sessions))
	}
	lats := make([][]time.Duration, n)
	errs := make([]int, n)
	firsts := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i := range n {
		lats[i] = make([]time.Duration, 0, 4096)
		wg.Go(func() {
			s := e.sessions[i]
			for t0 := time.Now(); t0.Before(deadline) && ctx.Err() == nil; t0 = time.Now() {
				_, err := s.call(ctx, c.tool, c.args)
				lats[i] = append(lats[i], time.Since(t0))
				if err != nil {
					errs[i]++
					if firsts[i] == nil {
						firsts[i] = err
					}
				}
			}
		})
	}
	wg.Wait()
	r := loadRun{elapsed: time.Since(start)}
	for i := range n {
		r.lat = append(r.lat, lats[i]...)
		r.errors += errs[i]
		if r.firstErr == nil {
			r.firstErr = firsts[i]
		}
	}
	r.calls = len(r.lat)
	slices.Sort(r.lat)
	if r.calls == 0 || r.errors*2 > r.calls {
		return r, fmt.Errorf("%s %s x%d: %d of %d calls failed: %w", e.name, c.tool, n, r.errors, r.calls, errors.Join(r.firstErr, errNoCalls))
	}
	return r, nil
}

// errNoCalls closes the error of a failed load point (which may have no
// first error when no call completed).
var errNoCalls = errors.New("too few calls succeeded")

// loadStat summarises repetitions of one point: medians of each figure.
func loadStat(runs []loadRun) LoadStat {
	var st LoadStat
	cps, p50, p99 := make([]float64, len(runs)), make([]float64, len(runs)), make([]float64, len(runs))
	for i, r := range runs {
		cps[i], p50[i], p99[i] = r.callsPerSec(), r.p50(), r.p99()
		st.Calls += r.calls
		st.Errors += r.errors
	}
	st.CallsPerSec, st.P50Ms, st.P99Ms = Median(cps), Median(p50), Median(p99)
	return st
}

func runsField(runs []loadRun, f func(loadRun) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = f(r)
	}
	return out
}
