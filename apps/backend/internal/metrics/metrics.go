// Package metrics is the backend's Prometheus registry: what it counts,
// under which names and labels, and the /metrics handler that serves it
// in the Prometheus text exposition format.
//
// Labels take values from closed sets only — action and tool names the
// catalog declares (every upstream tool counts as "upstream"), the error
// codes of kanban, agent type names from the agents file, executor kinds —
// never task, session or user values, so a series count is bounded by the
// configuration, not by traffic.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Outcomes of a call: ok; refused (the caller's mistake, answered with an
// error the caller can act on: a bad argument, a missing task, a
// forbidden action); error (ours: internal or unavailable).
const (
	OutcomeOK      = "ok"
	OutcomeRefused = "refused"
	OutcomeError   = "error"
)

// Kinds of refusal or error beyond kanban's codes: arguments that failed
// a tool's schema before any action ran, and a handler that panicked.
const (
	KindInvalidArguments = "invalid_arguments"
	KindPanic            = "panic"
)

// UpstreamTool is the tool label of every proxied upstream tool.
const UpstreamTool = "upstream"

// latencyBuckets span a cached read (0.1 ms) to a slow write (10 s).
var latencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10}

// Metrics is one backend's registry and the instruments the backend
// updates directly; gauges read from other parts register with Func.
type Metrics struct {
	reg           *prometheus.Registry
	actionCalls   *prometheus.CounterVec
	actionSeconds *prometheus.HistogramVec
	toolCalls     *prometheus.CounterVec
	toolSeconds   *prometheus.HistogramVec
	refusals      *prometheus.CounterVec
	bridgeCalls   *prometheus.CounterVec
	upstreamCalls *prometheus.CounterVec
}

// New returns a registry holding the Go runtime's and the process's
// standard collectors and the backend's own instruments.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.actionCalls = counterVec("kandev_action_calls_total", 3)
	m.actionSeconds = histogramVec("kandev_action_call_duration_seconds", latencyBuckets)
	m.toolCalls = counterVec("kandev_mcp_tool_calls_total", 2)
	m.toolSeconds = histogramVec("kandev_mcp_tool_call_duration_seconds", latencyBuckets)
	m.refusals = counterVec("kandev_refusals_total", 2)
	m.bridgeCalls = counterVec("kandev_bridge_tool_calls_total", 2)
	m.upstreamCalls = counterVec("kandev_upstream_calls_total", 2)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.actionCalls, m.actionSeconds, m.toolCalls, m.toolSeconds, m.refusals, m.bridgeCalls, m.upstreamCalls)
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Registry is the registry itself (tests gather it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Classify is the outcome and kind of an answer: kind is "" when ok, else
// its error code.
func Classify(err error) (outcome, kind string) {
	if err == nil {
		return OutcomeOK, ""
	}
	code := kanban.ErrorCode(err)
	if code == kanban.CodeInternal || code == kanban.CodeUnavailable {
		return OutcomeError, string(code)
	}
	return OutcomeRefused, string(code)
}

// ObserveAction records one action call. name must be a registered
// action (the registry passes "unknown" for others); caller is
// "operator" or "session".
func (m *Metrics) ObserveAction(name, caller string, err error, d time.Duration) {
	outcome, kind := Classify(err)
	m.actionCalls.WithLabelValues(name, caller, outcome).Inc()
	m.actionSeconds.WithLabelValues(name).Observe(d.Seconds())
	if kind != "" {
		m.refusals.WithLabelValues("action", kind).Inc()
	}
}

// ObserveTool records one MCP tool call: tool is a catalog tool's name or
// UpstreamTool, wrapperOutcome what the wrapper logged ("ok", an error
// code, "invalid_arguments", "panic", "internal", or an upstream
// outcome).
func (m *Metrics) ObserveTool(tool, wrapperOutcome string, d time.Duration) {
	outcome, kind := toolOutcome(wrapperOutcome)
	m.toolCalls.WithLabelValues(tool, outcome).Inc()
	m.toolSeconds.WithLabelValues(tool).Observe(d.Seconds())
	if kind != "" {
		m.refusals.WithLabelValues("mcp", kind).Inc()
	}
	if tool == UpstreamTool {
		m.upstreamCalls.WithLabelValues("mcp", upstreamOutcome(wrapperOutcome)).Inc()
	}
}

// wrapperOutcomes are the outcomes the validating wrapper logs (for
// Kandev's tools: "ok", an error code, invalid_arguments, panic,
// internal; for proxied ones also what the upstream call came to), each
// with the outcome and the refusal kind it counts as.
var wrapperOutcomes = map[string][2]string{
	"ok":                              {OutcomeOK, ""},
	string(kanban.CodeBadRequest):     {OutcomeRefused, string(kanban.CodeBadRequest)},
	string(kanban.CodeValidation):     {OutcomeRefused, string(kanban.CodeValidation)},
	string(kanban.CodeNotFound):       {OutcomeRefused, string(kanban.CodeNotFound)},
	string(kanban.CodeConflict):       {OutcomeRefused, string(kanban.CodeConflict)},
	string(kanban.CodeUnauthorized):   {OutcomeRefused, string(kanban.CodeUnauthorized)},
	string(kanban.CodeForbidden):      {OutcomeRefused, string(kanban.CodeForbidden)},
	string(kanban.CodeUnknownAction):  {OutcomeRefused, string(kanban.CodeUnknownAction)},
	string(kanban.CodeRateLimited):    {OutcomeRefused, string(kanban.CodeRateLimited)},
	string(kanban.CodeBudgetExceeded): {OutcomeRefused, string(kanban.CodeBudgetExceeded)},
	string(kanban.CodeUnavailable):    {OutcomeError, string(kanban.CodeUnavailable)},
	string(kanban.CodeInternal):       {OutcomeError, string(kanban.CodeInternal)},
	KindInvalidArguments:              {OutcomeRefused, KindInvalidArguments},
	KindPanic:                         {OutcomeError, KindPanic},
	"internal":                        {OutcomeError, string(kanban.CodeInternal)},
	// An upstream tool's answer marked isError is the tool's own refusal;
	// the rest are the upstream server's or the link's failures.
	"tool_error":     {OutcomeRefused, "upstream_tool_error"},
	"unavailable":    {OutcomeError, "upstream_unavailable"},
	"timeout":        {OutcomeError, "upstream_timeout"},
	"cancelled":      {OutcomeError, "upstream_cancelled"},
	"upstream_error": {OutcomeError, "upstream_error"},
	"too_large":      {OutcomeError, "upstream_too_large"},
	"invalid_result": {OutcomeError, "upstream_invalid_result"},
}

// KnownOutcome reports whether o is an outcome the wrapper logs (what a
// bridge may report in session.report_calls).
func KnownOutcome(o string) bool {
	_, ok := wrapperOutcomes[o]
	return ok
}

// toolOutcome maps the wrapper's outcome onto the closed label sets (an
// unknown one counts as an internal error).
func toolOutcome(o string) (outcome, kind string) {
	if v, ok := wrapperOutcomes[o]; ok {
		return v[0], v[1]
	}
	return OutcomeError, string(kanban.CodeInternal)
}

// upstreamOutcome is the kandev_upstream_calls_total outcome of a proxied
// call: the wrapper's own word for it (a closed set), or "error".
func upstreamOutcome(o string) string {
	if KnownOutcome(o) {
		return o
	}
	return OutcomeError
}

// ObserveBridge records n tool calls an agent's `kandev mcp` bridge
// answered (reported in session.report_calls): tool is a catalog tool's
// name or UpstreamTool, o what the bridge's wrapper logged (KnownOutcome).
func (m *Metrics) ObserveBridge(tool, o string, n int) {
	outcome, kind := toolOutcome(o)
	m.bridgeCalls.WithLabelValues(tool, outcome).Add(float64(n))
	if kind != "" {
		m.refusals.WithLabelValues("bridge", kind).Add(float64(n))
	}
	if tool == UpstreamTool {
		m.upstreamCalls.WithLabelValues("bridge", upstreamOutcome(o)).Add(float64(n))
	}
}

// turnReasons are ACP's stop reasons and ours ("error"); an agent's other
// strings count as "other" (an agent chooses them).
var turnReasons = map[string]bool{"end_turn": true, "max_tokens": true, "max_turn_requests": true, "refusal": true,
	"cancelled": true, "error": true}

// Turns registers the agent-turn instruments and returns what records one
// ended turn: how it ended and how long it ran.
func (m *Metrics) Turns() func(stopReason string, d time.Duration) {
	ended := counterVec("kandev_agent_turns_total", 1)
	d := def("kandev_agent_turn_duration_seconds", "histogram", 0)
	took := prometheus.NewHistogram(prometheus.HistogramOpts{Name: d.Name, Help: d.Help, Buckets: prometheus.ExponentialBuckets(0.05, 2.5, 12)})
	m.reg.MustRegister(ended, took)
	return func(reason string, d time.Duration) {
		if !turnReasons[reason] {
			reason = "other"
		}
		ended.WithLabelValues(reason).Inc()
		took.Observe(d.Seconds())
	}
}

// Histogram registers the declared latency histogram (seconds) name,
// which the caller observes.
func (m *Metrics) Histogram(name string) prometheus.Histogram {
	d := def(name, "histogram", 0)
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: d.Name, Help: d.Help, Buckets: latencyBuckets})
	m.reg.MustRegister(h)
	return h
}

// GaugeFunc registers the declared gauge name, whose value fn returns at
// each scrape.
func (m *Metrics) GaugeFunc(name string, fn func() float64) {
	d := def(name, "gauge", 0)
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: d.Name, Help: d.Help}, fn))
}

// CounterFunc registers the declared counter name, whose value fn returns
// at each scrape (fn must never decrease).
func (m *Metrics) CounterFunc(name string, fn func() float64) {
	d := def(name, "counter", 0)
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: d.Name, Help: d.Help}, fn))
}

// LabeledGauges registers the declared two-label gauge family name, whose
// series fn returns at each scrape: one value per pair of label values.
func (m *Metrics) LabeledGauges(name string, fn func() map[[2]string]float64) {
	d := def(name, "gauge", 2)
	m.reg.MustRegister(&labeled{desc: prometheus.NewDesc(d.Name, d.Help, d.Labels, nil), fn: fn})
}

func counterVec(name string, labels int) *prometheus.CounterVec {
	d := def(name, "counter", labels)
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: d.Name, Help: d.Help}, d.Labels)
}

func histogramVec(name string, buckets []float64) *prometheus.HistogramVec {
	d := def(name, "histogram", 1)
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: d.Name, Help: d.Help, Buckets: buckets}, d.Labels)
}

// labeled is LabeledGauges' collector.
type labeled struct {
	desc *prometheus.Desc
	fn   func() map[[2]string]float64
}

func (l *labeled) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

func (l *labeled) Collect(ch chan<- prometheus.Metric) {
	for k, v := range l.fn() {
		ch <- prometheus.MustNewConstMetric(l.desc, prometheus.GaugeValue, v, k[0], k[1])
	}
}
