package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The calls of sections 2 and 3.
var (
	floorCall = call{tool: FloorTool, args: json.RawMessage(`{}`)}
	listCall  = call{tool: "list_tasks_kandev", args: json.RawMessage(`{}`)}
	// listSmallCall is the same listing with a 5-task page: the cost of the
	// path without most of the payload.
	listSmallCall = call{tool: "list_tasks_kandev", args: json.RawMessage(`{"limit":5}`)}
	createCall    = call{tool: "create_task_kandev", args: json.RawMessage(
		`{"title":"Benchmark task","prompt":"Created by kandev-bench to measure create_task_kandev."}`)}
	// prefillCall creates the listed tasks, each with a 2 KB prompt.
	prefillCall = call{tool: "create_task_kandev", args: json.RawMessage(
		`{"title":"Benchmark task with a long prompt","prompt":"` + strings.Repeat("Investigate, fix and test. ", 80)[:prefillPromptLen] + `"}`)}
)

const (
	// prefillTasks is how many tasks the round-trip board gets before any
	// measurement, so list_tasks_kandev always returns a full default page.
	prefillTasks = 50
	// prefillPromptLen is the prompt length of those tasks (the issue's
	// "2 KB prompts").
	prefillPromptLen = 2000
	// sameBytesPrefix names a call's same-bytes floor (target and tool).
	sameBytesPrefix = "same_"
)

var pprofBanner = regexp.MustCompile(`profiles on (http://\S+/debug/pprof/)`)

// target is one (endpoint, call) series measured at several client counts.
type target struct {
	key  string
	ep   *endpoint
	c    call
	proc *proc // the server process, for its CPU time (nil: not measured)
	runs map[int][]loadRun
	// respBytes is the size of one response body, pageBytes of its
	// structured content.
	respBytes, pageBytes int
	// creates counts the successful calls of a create target.
	creates bool
}

// roundTrips is what sections 2 and 3 measured.
type roundTrips struct {
	points     []RoundTripPoint
	bridge     []BridgePoint
	profiles   []ServerProfile
	durability *Durability
}

// MeasureRoundTrips runs sections 2 and 3 against child processes: the
// floor server (no-op and same-bytes floors), `kandev serve` and `kandev
// mcp --listen` attached to a session of that backend. Every repetition
// measures every point in the same order, so ratios can be paired per
// repetition. Then it profiles the backend under the Kandev calls, kills
// it and checks that every acknowledged create is in its database.
func MeasureRoundTrips(ctx context.Context, cfg Config) (*roundTrips, error) {
	dataDir, err := mkdir(cfg, "roundtrip-data")
	if err != nil {
		return nil, err
	}
	be, err := startBackendWith(ctx, cfg, "serve-roundtrip", dataDir, "--launch-agents=false", "--pprof", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer be.stop()
	pprofBase, err := bannerInLog(be.proc, pprofBanner)
	if err != nil {
		return nil, err
	}
	bridgeP, bridgeURL, err := startBridge(ctx, cfg, be)
	if err != nil {
		return nil, err
	}
	defer bridgeP.stop()
	maxN := slices.Max(cfg.Clients)
	hc := newHTTPClient(3 * maxN)
	direct, err := newEndpoint(ctx, "kandev /mcp", be.base+"/mcp", be.token, hc, maxN)
	if err != nil {
		return nil, err
	}
	bridge, err := newEndpoint(ctx, "kandev mcp --listen", bridgeURL, "", hc, slices.Max(cfg.BridgeClients))
	if err != nil {
		return nil, err
	}
	acked, err := prefill(ctx, direct)
	if err != nil {
		return nil, err
	}
	kandev := kandevTargets(direct, be.proc)
	floorP, floors, err := startFloors(ctx, cfg, hc, maxN, kandev)
	if err != nil {
		return nil, err
	}
	defer floorP.stop()
	acked++ // startFloors made one create_task_kandev call
	bridged := []*target{{key: "bridge list_tasks", ep: bridge, c: listCall}, {key: "bridge create_task", ep: bridge, c: createCall, creates: true}}
	targets := append(append(floors, kandev...), bridged...)
	warmAcked, err := warmUp(ctx, targets)
	if err != nil {
		return nil, err
	}
	acked += warmAcked
	procs := []*proc{floorP, be.proc, bridgeP}
	if acked, err = measureReps(ctx, cfg, targets, bridge, procs, acked); err != nil {
		return nil, err
	}
	out := &roundTrips{points: roundTripPoints(cfg, floors, kandev), bridge: bridgePoints(cfg, kandev[0:3:3], bridged)}
	if out.profiles, err = profileKandev(ctx, cfg, pprofBase, kandev); err != nil {
		return nil, err
	}
	acked += profiledCreates(out.profiles)
	if out.durability, err = checkDurability(ctx, be, dataDir, acked); err != nil {
		return nil, err
	}
	return out, nil
}

// kandevTargets is the calls measured on the backend's own /mcp (ep) of
// process p.
func kandevTargets(ep *endpoint, p *proc) []*target {
	return []*target{
		{key: "list_tasks", ep: ep, c: listCall, proc: p}, {key: "list_tasks_5", ep: ep, c: listSmallCall, proc: p},
		{key: "create_task", ep: ep, c: createCall, proc: p, creates: true},
	}
}

// warmUp checks each target's call and warms it up, returning the
// creates the backend acknowledged meanwhile.
func warmUp(ctx context.Context, targets []*target) (int, error) {
	acked := 0
	for _, t := range targets {
		t.runs = map[int][]loadRun{}
		var err error
		if t.respBytes, t.pageBytes, err = checkCall(ctx, t.ep, t.c); err != nil {
			return 0, err
		}
		warm, err := runLoad(ctx, t.ep, t.c, min(8, len(t.ep.sessions)), 300*time.Millisecond)
		if err != nil {
			return 0, err
		}
		acked += t.acked(warm) + boolInt(t.creates)
	}
	return acked, nil
}

// profiledCreates is the creates the backend acknowledged while profiled.
func profiledCreates(profiles []ServerProfile) int {
	n := 0
	for _, sp := range profiles {
		if sp.Target == "create_task" {
			n += sp.Calls - sp.Errors
		}
	}
	return n
}

// acked is how many calls of r acknowledged a create.
func (t *target) acked(r loadRun) int {
	if !t.creates {
		return 0
	}
	return r.calls - r.errors
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// measureReps runs every repetition of every point, recording the server
// and load generator CPU time of each run, and returns acked plus the
// creates acknowledged meanwhile.
func measureReps(ctx context.Context, cfg Config, targets []*target, bridge *endpoint, procs []*proc, acked int) (int, error) {
	point := time.Duration(cfg.Point * float64(time.Second))
	for rep := range cfg.Reps {
		for _, n := range cfg.Clients {
			cfg.Logf("round trip: repetition %d/%d, %d clients", rep+1, cfg.Reps, n)
			for _, t := range targets {
				if t.ep == bridge && !slices.Contains(cfg.BridgeClients, n) {
					continue
				}
				r, err := runMeasured(ctx, t, n, point)
				if err != nil {
					return acked, err
				}
				acked += t.acked(r)
				t.runs[n] = append(t.runs[n], r)
			}
			for _, p := range procs {
				if err := p.alive(); err != nil {
					return acked, err
				}
			}
		}
	}
	return acked, nil
}

// runMeasured is runLoad with the CPU time the server and this process
// spent on it (left zero where it cannot be read).
func runMeasured(ctx context.Context, t *target, n int, d time.Duration) (loadRun, error) {
	var srv0, self0 time.Duration
	var cpuErr error
	if t.proc != nil {
		srv0, cpuErr = procCPU(t.proc.cmd.Process.Pid)
	}
	self0, selfErr := selfCPU()
	r, err := runLoad(ctx, t.ep, t.c, n, d)
	if err != nil {
		return r, err
	}
	if t.proc != nil && cpuErr == nil {
		if srv1, err := procCPU(t.proc.cmd.Process.Pid); err == nil {
			r.serverCPU = srv1 - srv0
		}
	}
	if self1, err := selfCPU(); err == nil && selfErr == nil {
		r.clientCPU = self1 - self0
	}
	return r, nil
}

// startFloors writes the structured content of one answer of each Kandev
// call to a file and starts the floor server with a same-bytes tool per
// call; it returns the floor targets, the no-op floor first.
func startFloors(ctx context.Context, cfg Config, hc *http.Client, n int, kandev []*target) (*proc, []*target, error) {
	args := []string{"floor-server", "--addr", "127.0.0.1:0"}
	for _, t := range kandev {
		body, err := t.ep.sessions[0].call(ctx, t.c.tool, t.c.args)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", t.key, err)
		}
		sc, err := structured(body)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", t.key, err)
		}
		file := filepath.Join(cfg.WorkDir, sameBytesPrefix+t.key+".json")
		if err := os.WriteFile(file, sc, 0o600); err != nil {
			return nil, nil, err
		}
		args = append(args, "--same-bytes", sameBytesPrefix+t.key+"="+file)
	}
	p, url, err := startProc(ctx, procSpec{name: "floor", bin: cfg.BenchBin, dir: cfg.WorkDir, logDir: cfg.WorkDir, args: args, banner: floorBanner})
	if err != nil {
		return nil, nil, err
	}
	ep, err := newEndpoint(ctx, "floor", url, "", hc, n)
	if err != nil {
		p.stop()
		return nil, nil, err
	}
	floors := []*target{{key: "floor", ep: ep, c: floorCall, proc: p}}
	for _, t := range kandev {
		floors = append(floors, &target{key: sameBytesPrefix + t.key, ep: ep, c: call{tool: sameBytesPrefix + t.key, args: t.c.args}, proc: p})
	}
	return p, floors, nil
}

// bannerInLog finds re's first group in the log of p (lines printed before
// its serving banner are there once startProc returned).
func bannerInLog(p *proc, re *regexp.Regexp) (string, error) {
	b, err := os.ReadFile(p.log.Name())
	if err != nil {
		return "", err
	}
	m := re.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("%s printed no %q; see %s", p.name, re, p.log.Name())
	}
	return string(m[1]), nil
}

func roundTripPoints(cfg Config, floors, kandev []*target) []RoundTripPoint {
	byKey := map[string]*target{}
	for _, t := range floors {
		byKey[t.key] = t
	}
	var out []RoundTripPoint
	for _, t := range append(append([]*target(nil), floors...), kandev...) {
		for _, n := range cfg.Clients {
			p := RoundTripPoint{Target: t.key, Tool: t.c.tool, Args: string(t.c.args), ResponseBytes: t.respBytes, PageBytes: t.pageBytes,
				Clients: n, LoadStat: loadStat(t.runs[n]),
				ServerCPUUs: Median(runsField(t.runs[n], loadRun.serverCPUUs)), ClientCPUUs: Median(runsField(t.runs[n], loadRun.clientCPUUs))}
			if same, ok := byKey[sameBytesPrefix+t.key]; ok {
				p.OverFloor = PairedRatios(runsField(t.runs[n], loadRun.callsPerSec), runsField(byKey["floor"].runs[n], loadRun.callsPerSec))
				p.OverSameBytes = PairedRatios(runsField(t.runs[n], loadRun.callsPerSec), runsField(same.runs[n], loadRun.callsPerSec))
			}
			out = append(out, p)
		}
	}
	return out
}

func bridgePoints(cfg Config, direct, bridged []*target) []BridgePoint {
	var out []BridgePoint
	for _, b := range bridged {
		d := direct[slices.IndexFunc(direct, func(t *target) bool { return "bridge "+t.key == b.key })]
		for _, n := range cfg.BridgeClients {
			out = append(out, BridgePoint{
				Tool: d.c.tool, Clients: n, Direct: loadStat(d.runs[n]), Bridge: loadStat(b.runs[n]),
				AddedP50Ms: PairedDiffs(runsField(b.runs[n], loadRun.p50), runsField(d.runs[n], loadRun.p50)),
				AddedP99Ms: PairedDiffs(runsField(b.runs[n], loadRun.p99), runsField(d.runs[n], loadRun.p99)),
			})
		}
	}
	return out
}

// profileKandev profiles the backend under each Kandev call at the
// targets' client count, for at least 2 s each.
func profileKandev(ctx context.Context, cfg Config, pprofBase string, kandev []*target) ([]ServerProfile, error) {
	n := targetsAtClients
	if !slices.Contains(cfg.Clients, n) {
		n = slices.Max(cfg.Clients)
	}
	d := max(2*time.Second, time.Duration(cfg.Point*float64(time.Second)).Round(time.Second))
	var out []ServerProfile
	for _, t := range kandev {
		cfg.Logf("round trip: profiling kandev serve under %s, %d clients", t.key, n)
		sp, err := profileLoad(ctx, pprofBase, t.ep, t.key, t.c, n, d)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", t.key, err)
		}
		out = append(out, sp)
	}
	return out, nil
}

// prefill creates prefillTasks tasks with 2 KB prompts through the tool
// and returns how many creates it made.
func prefill(ctx context.Context, e *endpoint) (int, error) {
	for range prefillTasks {
		if _, err := e.sessions[0].call(ctx, prefillCall.tool, prefillCall.args); err != nil {
			return 0, fmt.Errorf("prefill: %w", err)
		}
	}
	return prefillTasks, nil
}

// checkCall makes one call and checks its answer (structured content for
// Kandev tools, a full page for list_tasks_kandev); it returns the size of
// the response body and of its structured content.
func checkCall(ctx context.Context, e *endpoint, c call) (int, int, error) {
	body, err := e.sessions[0].call(ctx, c.tool, c.args)
	if err != nil {
		return 0, 0, fmt.Errorf("%s %s: %w", e.name, c.tool, err)
	}
	if c.tool == FloorTool {
		return len(body), 0, nil
	}
	sc, err := structured(body)
	if err != nil {
		return 0, 0, fmt.Errorf("%s %s: %w", e.name, c.tool, err)
	}
	if c.tool == listCall.tool || c.tool == sameBytesPrefix+"list_tasks" || c.tool == sameBytesPrefix+"list_tasks_5" {
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		want := prefillTasks
		if string(c.args) == string(listSmallCall.args) {
			want = 5
		}
		if err := json.Unmarshal(sc, &l); err != nil {
			return 0, 0, fmt.Errorf("%s %s: %w", e.name, c.tool, err)
		}
		if len(l.Items) != want {
			return 0, 0, fmt.Errorf("%s %s: got %d items, want a full page of %d", e.name, c.tool, len(l.Items), want)
		}
	}
	return len(body), len(sc), nil
}
