package reliability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/bench"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Outcome classifies one call's answer.
type Outcome string

// Outcomes. Refused is an expected domain refusal (a WIP limit reached);
// Unavailable the retryable error of an outage; Internal and Timeout are
// always defects; Failed is any other unexpected error.
const (
	OutcomeOK          Outcome = "ok"
	OutcomeRefused     Outcome = "refused"
	OutcomeUnavailable Outcome = "unavailable"
	OutcomeInternal    Outcome = "internal"
	OutcomeTimeout     Outcome = "timeout"
	OutcomeFailed      Outcome = "failed"
)

// tally counts call outcomes and latencies, safely from many goroutines.
type tally struct {
	mu     sync.Mutex
	lat    []time.Duration
	counts map[Outcome]int
	first  map[Outcome]string // first detail per outcome, for diagnosis
}

func newTally() *tally {
	return &tally{counts: map[Outcome]int{}, first: map[Outcome]string{}}
}

func (t *tally) add(d time.Duration, o Outcome, detail string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lat = append(t.lat, d)
	t.counts[o]++
	if _, ok := t.first[o]; !ok && detail != "" {
		t.first[o] = kanban.Clip(detail, 300)
	}
}

// Stats is a tally's summary.
type Stats struct {
	Calls       int     `json:"calls"`
	OK          int     `json:"ok"`
	Refused     int     `json:"refused"`
	Unavailable int     `json:"unavailable"`
	Internal    int     `json:"internal"`
	Timeouts    int     `json:"timeouts"`
	Failed      int     `json:"failed"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	// FirstErrors are the first detail of each non-OK outcome.
	FirstErrors map[Outcome]string `json:"first_errors,omitempty"`
}

func (t *tally) stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	lat := slices.Clone(t.lat)
	slices.Sort(lat)
	st := Stats{Calls: len(lat), OK: t.counts[OutcomeOK], Refused: t.counts[OutcomeRefused],
		Unavailable: t.counts[OutcomeUnavailable], Internal: t.counts[OutcomeInternal],
		Timeouts: t.counts[OutcomeTimeout], Failed: t.counts[OutcomeFailed]}
	if len(lat) > 0 {
		st.P50Ms, st.P99Ms, st.MaxMs = ms(bench.Percentile(lat, 50)), ms(bench.Percentile(lat, 99)), ms(lat[len(lat)-1])
	}
	if len(t.first) > 0 {
		st.FirstErrors = map[Outcome]string{}
		for o, d := range t.first {
			if o != OutcomeOK {
				st.FirstErrors[o] = d
			}
		}
	}
	return st
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// errorsOf is the number of calls that are defects whatever the scenario.
func (s Stats) defects() int { return s.Internal + s.Timeouts + s.Failed }

// classifyErr maps a WebSocket call's error. Codes in refused are
// expected refusals.
func classifyErr(err error, refused ...kanban.Code) (Outcome, string) {
	if err == nil {
		return OutcomeOK, ""
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return OutcomeTimeout, err.Error()
	}
	if ke, ok := kanban.AsError(err); ok {
		switch {
		case ke.Code == kanban.CodeInternal:
			return OutcomeInternal, ke.Error()
		case ke.Code == kanban.CodeUnavailable:
			return OutcomeUnavailable, ke.Error()
		case slices.Contains(refused, ke.Code):
			return OutcomeRefused, ke.Error()
		}
		return OutcomeFailed, ke.Error()
	}
	return OutcomeFailed, err.Error()
}

// classifyToolText maps a tool error's text ("CODE: message", or
// "internal error (ref …)").
func classifyToolText(text string, refused ...kanban.Code) (Outcome, string) {
	if strings.HasPrefix(text, "internal error") {
		return OutcomeInternal, text
	}
	code, _, _ := strings.Cut(text, ":")
	switch kanban.Code(code) {
	case kanban.CodeInternal:
		return OutcomeInternal, text
	case kanban.CodeUnavailable:
		return OutcomeUnavailable, text
	}
	if slices.Contains(refused, kanban.Code(code)) {
		return OutcomeRefused, text
	}
	return OutcomeFailed, text
}

// check is one invariant's verdict.
type check struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail,omitempty"`
}

func checkf(name string, passed bool, format string, a ...any) check {
	return check{Name: name, Passed: passed, Detail: fmt.Sprintf(format, a...)}
}
