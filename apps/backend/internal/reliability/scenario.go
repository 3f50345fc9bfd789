package reliability

import (
	"time"
)

// Scenario is one scenario's outcome: what was injected, what was checked
// and the counts. It is what results.json holds and the page shows.
type Scenario struct {
	Name     string `json:"name"`
	Title    string `json:"title"`
	Injected string `json:"injected"`
	// Scale describes the run's size ("64 clients × 1000 calls").
	Scale string `json:"scale"`
	// Calls are every call the scenario made, by transport or phase.
	Calls map[string]Stats `json:"calls,omitempty"`
	// WritesChecked counts acknowledged writes looked up in the database
	// afterwards; Lost how many of them were missing or duplicated.
	WritesChecked int     `json:"writes_checked"`
	Lost          int     `json:"lost"`
	Checks        []check `json:"checks"`
	// Figures are scenario-specific measurements (name → value).
	Figures map[string]float64 `json:"figures,omitempty"`
	// Notes explain figures of this run.
	Notes   []string `json:"notes,omitempty"`
	Seconds float64  `json:"seconds"`
	// Skipped says why the scenario did not run (it then has no checks).
	Skipped string `json:"skipped,omitempty"`
	Passed  bool   `json:"passed"`
	// Error is set when the scenario could not be carried out at all.
	Error string `json:"error,omitempty"`
}

// scenarioRun accumulates a Scenario while it runs.
type scenarioRun struct {
	s     Scenario
	start time.Time
}

func newScenario(name, title, injected, scale string) *scenarioRun {
	return &scenarioRun{s: Scenario{Name: name, Title: title, Injected: injected, Scale: scale,
		Calls: map[string]Stats{}, Figures: map[string]float64{}}, start: time.Now()}
}

func (r *scenarioRun) check(c check) { r.s.Checks = append(r.s.Checks, c) }

func (r *scenarioRun) checkf(name string, passed bool, format string, a ...any) {
	r.check(checkf(name, passed, format, a...))
}

// calls records a tally under name and checks that it holds no defect
// (internal errors, timeouts, unexpected errors) and, unless outage is
// true, no UNAVAILABLE answer either.
func (r *scenarioRun) calls(name string, t *tally, outage bool) Stats {
	st := t.stats()
	r.s.Calls[name] = st
	bad := st.defects()
	if !outage {
		bad += st.Unavailable
	}
	detail := ""
	for o, d := range st.FirstErrors {
		if o != OutcomeRefused && (outage || o != OutcomeUnavailable) || (!outage && o == OutcomeUnavailable) {
			detail += " First " + string(o) + ": " + d + "."
		}
	}
	r.checkf(name+": every call answered, no internal error", bad == 0,
		"%d calls: %d ok, %d refused as expected, %d unavailable, %d internal, %d timeouts, %d other errors.%s",
		st.Calls, st.OK, st.Refused, st.Unavailable, st.Internal, st.Timeouts, st.Failed, detail)
	return st
}

// fail ends the scenario with an error (it could not be carried out).
func (r *scenarioRun) fail(err error) Scenario {
	r.s.Error = err.Error()
	return r.done()
}

// skip ends the scenario as skipped, saying why.
func (r *scenarioRun) skip(why string) Scenario {
	r.s.Skipped = why
	return r.done()
}

func (r *scenarioRun) done() Scenario {
	r.s.Seconds = time.Since(r.start).Seconds()
	r.s.Passed = r.s.Error == "" && r.s.Skipped == "" && r.s.Lost == 0
	for _, c := range r.s.Checks {
		r.s.Passed = r.s.Passed && c.Passed
	}
	return r.s
}
