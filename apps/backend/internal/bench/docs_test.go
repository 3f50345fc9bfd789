package bench

import (
	"regexp"
	"strings"
	"testing"
)

func TestPageFrontmatterAndSingleH1(t *testing.T) {
	page := Page(sample())
	lines := strings.Split(page, "\n")
	if lines[0] != "---" {
		t.Fatalf("first line: got %q, want ---", lines[0])
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if lines[i] == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		t.Fatal("frontmatter is not closed")
	}
	fm := strings.Join(lines[1:end], "\n")
	for _, key := range []string{"title", "description"} {
		if !regexp.MustCompile(`(?m)^` + key + `: \S`).MatchString(fm) {
			t.Errorf("frontmatter %q: no non-empty %s", fm, key)
		}
	}
	if lines[end+1] != "# Performance" {
		t.Errorf("line after the frontmatter: got %q, want the H1", lines[end+1])
	}
	inFence, h1s := false, 0
	for _, l := range lines[end+1:] {
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(l, "# ") {
			h1s++
		}
	}
	if h1s != 1 {
		t.Errorf("got %d H1s, want 1", h1s)
	}
}

func TestPageShowsTheData(t *testing.T) {
	page := Page(sample())
	for _, want := range []string{
		"2 cores, Test CPU", // machine
		"Go: go1.26.0",      // toolchain
		"Kandev: abc1234",
		"2026-01-02T03:04:05Z",         // date
		"make bench\nbin/kandev-bench", // commands, verbatim
		"| create_task, all 16 fields | 5.0 µs, 73 allocs | 4.9 µs, 73 allocs | 1.02× |",
		"missing: not in the catalog",
		"| (b) list_tasks, 50 tasks | 33000 B | 16000 B | 8 | 4250 | 0.90 ms | 4.00 ms | 0.42× | 0.85× | 200 µs | 50 µs | 0 (0) |",
		"| (a) no-op floor | 0 B | — | 8 | 10000 | 0.70 ms | 3.00 ms | — | — | 60 µs | 40 µs | 0 (0) |",
		"900 of the 900 creates acknowledged",
		"| mcp-go handling the request | 125 µs (50%) |",
		"| **total per call** | **250 µs** (7000 calls) |",
		"| config | task | 34 | 0.400 ms | 0.900 ms |",
		"| full Compile() | | all | 15.00 ms |",
		"1000 tasks/s, p50 5.00 ms",
		"| task | 33 | 40000 | 20000 | 15000 | 0 | 0 |",
		"| 4 | mode switch into config (p50) | 0.400 ms | <= 0.300 ms | **missed** |",
		"| 4 | mode switch into task (p50) | 0.006 ms | <= 0.300 ms | met |",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !strings.Contains(page, "**missed** (1 open objects, 0 undescribed properties)") {
		t.Error("page does not explain why the external catalog target is missed")
	}
}

func TestPageWithNothingMeasured(t *testing.T) {
	r := &Results{FormatVersion: FormatVersion, Date: "d", Machine: Machine{Cores: 1, CPUModel: "x"}}
	page := Page(r)
	if got := strings.Count(page, "Not measured in this run."); got != len(Sections)+1 {
		t.Errorf("got %d unmeasured sections, want %d (bridge and round trip are separate)", got, len(Sections)+1)
	}
}

func TestAuditSchema(t *testing.T) {
	cases := []struct {
		name              string
		schema            map[string]any
		open, undescribed int
	}{
		{"closed root, described", map[string]any{"type": "object", "additionalProperties": false,
			"properties": map[string]any{"a": map[string]any{"type": "string", "description": "A."}}}, 0, 0},
		{"open root", map[string]any{"type": "object", "properties": map[string]any{}}, 1, 0},
		{"undescribed property", map[string]any{"type": "object", "additionalProperties": false,
			"properties": map[string]any{"a": map[string]any{"type": "string"}}}, 0, 1},
		{"explicit record", map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
			"m": map[string]any{"type": "object", "description": "M.", "propertyNames": map[string]any{"pattern": "^x"},
				"additionalProperties": map[string]any{"type": "string"}}}}, 0, 0},
		{"open nested in array and oneOf", map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
			"l": map[string]any{"type": "array", "description": "L.", "items": map[string]any{"oneOf": []any{
				map[string]any{"type": "object", "properties": map[string]any{"k": map[string]any{"type": "string"}}},
				map[string]any{"type": "object", "unevaluatedProperties": false},
			}}}}}, 1, 1},
	}
	for _, c := range cases {
		open, undescribed := auditSchema(c.schema)
		if open != c.open || undescribed != c.undescribed {
			t.Errorf("%s: got %d open, %d undescribed; want %d, %d", c.name, open, undescribed, c.open, c.undescribed)
		}
	}
}

func TestUpstreamSection(t *testing.T) {
	r := &Results{FormatVersion: FormatVersion, Date: "d", Machine: Machine{Cores: 1, CPUModel: "x"},
		Upstream: &UpstreamBench{TypicalTools: 50, TypicalBytes: 58000, Typical: LatencyStat{P50Ms: 30, P99Ms: 40, Samples: 20},
			Cases: []UpstreamCase{{Name: "ref_chain_10000", Note: "a chain", Bytes: 238954, Limit: "ref_hops", Time: LatencyStat{P50Ms: 6}}},
			Worst: UpstreamCase{Name: "ref_chain_10000", Limit: "ref_hops", Time: LatencyStat{P50Ms: 6}},
			Calls: []UpstreamCall{{Tool: "echo", Clients: 1, Direct: LoadStat{P50Ms: 0.05}, Gateway: LoadStat{P50Ms: 0.16}, OverDirect: 3.2, AddedP50Ms: 0.11}}}}
	r.Targets = Evaluate(r)
	page := Page(r)
	for _, want := range []string{
		"| ref_chain_10000: a chain | 238954 | ref_hops | 6.000 ms |",
		"| 10 | gateway / direct upstream call p50, echo, 1 client | 3.20× | <= 1.20× | **missed** |",
		"**Gateway against a direct upstream call.**",
		"A typical 50-tool server (58000 schema bytes in all)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
