package bench

import (
	"strings"
	"testing"
)

func TestAnalysisOnlyForMissedTargets(t *testing.T) {
	r := sample()
	page := Page(r)
	for _, want := range []string{"## Why targets are missed", "**Refusals.**",
		"**(b) list_tasks, 5 tasks at 8 clients.** (a) no-op floor costs 60 µs of server CPU and 40 µs of load-generator CPU per call",
		"At 0.5× its calls/s a call could cost about 200 µs in all, so Kandev's server side would have to fit in about 160 µs instead of 250.",
		"Its profile: mcp-go handling the request 125 µs (50%), SQLite (modernc.org/sqlite, database/sql) 75 µs (30%)",
		"**tools/list size.**", "office mode: 11 tools, 18000 B against 14800 B"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "Validation against mcp-go's built-in") || strings.Contains(page, "**(b) list_tasks, 50 tasks at") {
		t.Error("analysis of a retired or met target shown")
	}
	if strings.Contains(page, "**Wrapper check against the bare Validate.**") {
		t.Error("noise paragraph shown, but no check / bare target is missed")
	}

	// The same run with every target met explains nothing.
	for i := range r.Targets {
		r.Targets[i].Met = true
	}
	if page := Page(r); strings.Contains(page, "Why targets are missed") {
		t.Error("analysis shown although every target is met")
	}
}

func TestNoiseAnalysis(t *testing.T) {
	r := sample()
	r.Validation[0].WrapperOverBare = 1.3 // same allocations as the bare Validate: noise
	r.Validation = append(r.Validation, ValidationCase{Case: "other", Valid: true, WrapperOverBare: 1.5,
		Wrapper: Micro{AllocsPerOp: 50}, Bare: Micro{AllocsPerOp: 40}}) // different work: not called noise
	r.Targets = Evaluate(r)
	got := noiseAnalysis(r)
	if !strings.Contains(got, "create_task, all 16 fields (73 allocations each)") || strings.Contains(got, "other") {
		t.Errorf("noise analysis: got %q", got)
	}
}
