package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sample is a small but complete Results, shaped like a real run.
func sample() *Results {
	r := &Results{
		FormatVersion: FormatVersion, Date: "2026-01-02T03:04:05Z", ElapsedSeconds: 123, KandevVersion: "abc1234",
		Machine:  Machine{CPUModel: "Test CPU", Cores: 2, OS: "linux", Arch: "amd64", GoVersion: "go1.26.0", Kernel: "6.1"},
		Commands: []string{"make bench", "bin/kandev-bench run"},
		Method:   Method{Repetitions: 5, MicroRepetitions: 20, PointSeconds: 1.5, BenchTime: "250ms", ClientCounts: []int{1, 8, 64}, StoreTasks: 100000},
		Validation: []ValidationCase{
			{Case: "create_task, all 16 fields", Tool: "create_task_kandev", Valid: true,
				Wrapper: Micro{NsPerOp: 5000, AllocsPerOp: 73}, WrapperJSON: Micro{NsPerOp: 9000, AllocsPerOp: 130},
				Bare: Micro{NsPerOp: 4900, AllocsPerOp: 73}, Fresh: Micro{NsPerOp: 700000, AllocsPerOp: 16000},
				MCPGo: Micro{NsPerOp: 40000, AllocsPerOp: 170}, WrapperOverBare: 1.02, MCPGoOverWrapper: 4.4, FreshOverWrapper: 140},
			{Case: "show_rich_output, 4 blocks", Tool: "show_rich_output_kandev", Missing: true, Note: "not in the catalog"},
			{Case: "create_task, rejected (5 problems)", Tool: "create_task_kandev", Problems: 5, MCPGoRejected: true,
				Wrapper: Micro{NsPerOp: 17000}, Bare: Micro{NsPerOp: 2800}, WrapperOverBare: 6.1, MCPGoOverWrapper: 0.5},
		},
		RoundTrip: []RoundTripPoint{
			{Target: "floor", Tool: FloorTool, Args: "{}", Clients: 8, LoadStat: LoadStat{CallsPerSec: 10000, P50Ms: 0.7, P99Ms: 3},
				ServerCPUUs: 60, ClientCPUUs: 40},
			{Target: "same_list_tasks", Tool: "same_list_tasks", Args: "{}", Clients: 8, ResponseBytes: 33000, PageBytes: 16000,
				LoadStat: LoadStat{CallsPerSec: 5000, P50Ms: 1.5, P99Ms: 5}, ServerCPUUs: 150, ClientCPUUs: 50},
			{Target: "list_tasks", Tool: "list_tasks_kandev", Args: "{}", Clients: 8, ResponseBytes: 33000, PageBytes: 16000,
				OverFloor: 0.42, OverSameBytes: 0.85, LoadStat: LoadStat{CallsPerSec: 4250, P50Ms: 0.9, P99Ms: 4}, ServerCPUUs: 200, ClientCPUUs: 50},
			{Target: "list_tasks_5", Tool: "list_tasks_kandev", Args: `{"limit":5}`, Clients: 8, OverFloor: 0.35, OverSameBytes: 0.6,
				LoadStat: LoadStat{CallsPerSec: 3500, P50Ms: 1, P99Ms: 4}, ServerCPUUs: 250, ClientCPUUs: 40},
			{Target: "create_task", Tool: "create_task_kandev", Args: "{}", Clients: 8, OverFloor: 0.3, OverSameBytes: 0.4,
				LoadStat: LoadStat{CallsPerSec: 3000, P50Ms: 2, P99Ms: 9}, ServerCPUUs: 280, ClientCPUUs: 40},
		},
		Profiles: []ServerProfile{{Target: "list_tasks_5", Clients: 8, Seconds: 2, Calls: 7000, CPUUs: 250, Shares: []CPUShare{
			{Name: "SQLite (modernc.org/sqlite, database/sql)", Share: 0.3, CPUUs: 75},
			{Name: "mcp-go handling the request", Share: 0.5, CPUUs: 125},
			{Name: "Go runtime (GC, scheduler)", Share: 0.2, CPUUs: 50},
		}}},
		Durability: &Durability{Acknowledged: 900, Found: 900},
		Bridge:     []BridgePoint{{Tool: "list_tasks_kandev", Clients: 1, AddedP50Ms: 0.4, AddedP99Ms: 1.2}},
		ModeSwitch: []ModeSwitch{
			{Mode: "task", From: "office", Tools: 33, Time: LatencyStat{P50Ms: 0.006, P99Ms: 0.03, Samples: 1000}},
			{Mode: "config", From: "task", Tools: 34, Time: LatencyStat{P50Ms: 0.4, P99Ms: 0.9, Samples: 1000}},
		},
		Compile: LatencyStat{P50Ms: 15, P99Ms: 17, Samples: 5},
		Store: StoreScale{Tasks: 100000, SeedSeconds: 1.8, Writers: 8,
			Lists: []StoreList{
				{Name: "step, first page", Args: `{"workflow_step_id":"<step id>"}`, Tool: LatencyStat{P50Ms: 1.1}, Store: LatencyStat{P50Ms: 0.2}},
				{Name: "step, deep page", Args: `{}`, Tool: LatencyStat{P50Ms: 9}, Store: LatencyStat{P50Ms: 0.2}},
			},
			Create: LoadStat{CallsPerSec: 1000, P50Ms: 5, P99Ms: 40, Calls: 7000}},
		Catalog: []CatalogMode{
			{Mode: "task", Tools: 33, Bytes: 40000, InputBytes: 20000, OutputBytes: 15000},
			{Mode: "external", Tools: 38, Bytes: 29000, Open: 1},
			{Mode: "office", Tools: 11, Bytes: 18000},
		},
	}
	r.Targets = Evaluate(r)
	return r
}

func TestResultsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	want := sample()
	if err := want.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("results after a round trip (-want +got):\n%s", d)
	}
}

func TestReadFileRejectsOtherVersions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(path, []byte(`{"format_version": 99}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "format version 99") {
		t.Errorf("got %v, want a format version error", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("got nil for a missing file, want an error")
	}
}

func TestEvaluate(t *testing.T) {
	got := map[string]Target{}
	for _, tg := range sample().Targets {
		got[tg.Name] = tg
	}
	cases := []struct {
		name string
		met  bool
	}{
		{"wrapper check / bare Validate, create_task, all 16 fields", true},
		{"wrapper check / bare Validate, show_rich_output, 4 blocks", false}, // missing tool: not measured
		{"wrapper check / bare Validate, create_task, rejected (5 problems)", false},
		{"(b) list_tasks, 50-task page / (a′) its same-bytes floor, calls/s at 8 clients", true},
		{"bytes of a 50-task page of tasks with 2000-byte prompts (structured content)", true},
		{"(b) list_tasks, 5-task page / (a) no-op floor, calls/s at 8 clients", false},
		{"(c) create_task / (a) no-op floor, calls/s at 8 clients, every acknowledged create durable", true},
		{"bridge adds to p50, list_tasks, 1 client", true},
		{"mode switch into task (p50)", true},
		{"mode switch into config (p50)", false},
		{"list_tasks first page of 100000 tasks, step (p50)", true},
		{"tools/list bytes, task mode", true},
		{"tools/list bytes, external mode", false}, // small enough, but an open object
		{"tools/list bytes, office mode", false},
	}
	for _, c := range cases {
		tg, ok := got[c.name]
		if !ok {
			t.Errorf("no target %q; have %v", c.name, keys(got))
			continue
		}
		if tg.Met != c.met {
			t.Errorf("%s: got met=%v (value %v %s %v), want met=%v", c.name, tg.Met, tg.Value, tg.Op, tg.Limit, c.met)
		}
	}
	durable := got["(c) create_task / (a) no-op floor, calls/s at 8 clients, every acknowledged create durable"]
	if durable.Note != "900 of 900 acknowledged creates found after kill -9" {
		t.Errorf("create target note: got %q", durable.Note)
	}
	r := sample()
	r.Durability.Found = 899
	for _, tg := range Evaluate(r) {
		if strings.HasPrefix(tg.Name, "(c) create_task") && (tg.Met || !strings.Contains(tg.Note, "only 899 of 900")) {
			t.Errorf("a lost create: got met=%v, note %q; want missed, saying so", tg.Met, tg.Note)
		}
	}
	if n := len(got); n != len(cases) {
		t.Errorf("got %d targets, want %d: %v", n, len(cases), keys(got))
	}
}

func keys(m map[string]Target) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
