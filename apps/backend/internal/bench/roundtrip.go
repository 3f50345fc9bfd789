package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
)

// prefillTasks is how many tasks the round-trip board gets before any
// measurement, so list_tasks_kandev always returns a full default page.
const prefillTasks = 50

// target is one (endpoint, call) series measured at several client counts.
type target struct {
	key  string
	ep   *endpoint
	c    call
	runs map[int][]loadRun // by client count
	// respBytes is the size of one response body.
	respBytes int
}

// MeasureRoundTrips runs sections 2 and 3 against three child processes:
// the floor server, `kandev serve` and `kandev mcp --listen` attached to a
// session of that backend. Every repetition measures every point in the
// same order, so ratios can be paired per repetition.
func MeasureRoundTrips(ctx context.Context, cfg Config) ([]RoundTripPoint, []BridgePoint, error) {
	floorP, floorURL, err := startFloor(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	defer floorP.stop()
	dataDir, err := mkdir(cfg, "roundtrip-data")
	if err != nil {
		return nil, nil, err
	}
	be, err := startBackend(ctx, cfg, "serve-roundtrip", dataDir)
	if err != nil {
		return nil, nil, err
	}
	defer be.stop()
	bridgeP, bridgeURL, err := startBridge(ctx, cfg, be)
	if err != nil {
		return nil, nil, err
	}
	defer bridgeP.stop()

	maxN := slices.Max(cfg.Clients)
	hc := newHTTPClient(3 * maxN)
	floor, err := newEndpoint(ctx, "floor", floorURL, "", hc, maxN)
	if err != nil {
		return nil, nil, err
	}
	direct, err := newEndpoint(ctx, "kandev /mcp", be.base+"/mcp", be.token, hc, maxN)
	if err != nil {
		return nil, nil, err
	}
	bridge, err := newEndpoint(ctx, "kandev mcp --listen", bridgeURL, "", hc, slices.Max(cfg.BridgeClients))
	if err != nil {
		return nil, nil, err
	}
	if err := prefill(ctx, direct); err != nil {
		return nil, nil, err
	}
	targets := []*target{
		{key: "floor", ep: floor, c: floorCall}, {key: "list_tasks", ep: direct, c: listCall},
		{key: "list_tasks_5", ep: direct, c: listSmallCall}, {key: "create_task", ep: direct, c: createCall},
		{key: "bridge list_tasks", ep: bridge, c: listCall}, {key: "bridge create_task", ep: bridge, c: createCall},
	}
	for _, t := range targets {
		t.runs = map[int][]loadRun{}
		n, err := checkCall(ctx, t.ep, t.c)
		if err != nil {
			return nil, nil, err
		}
		t.respBytes = n
		if _, err := runLoad(ctx, t.ep, t.c, min(8, len(t.ep.sessions)), 300*time.Millisecond); err != nil { // warm-up
			return nil, nil, err
		}
	}
	point := time.Duration(cfg.Point * float64(time.Second))
	for rep := range cfg.Reps {
		for _, n := range cfg.Clients {
			cfg.Logf("round trip: repetition %d/%d, %d clients", rep+1, cfg.Reps, n)
			for _, t := range targets {
				if t.ep == bridge && !slices.Contains(cfg.BridgeClients, n) {
					continue
				}
				r, err := runLoad(ctx, t.ep, t.c, n, point)
				if err != nil {
					return nil, nil, err
				}
				t.runs[n] = append(t.runs[n], r)
			}
			for _, p := range []*proc{floorP, be.proc, bridgeP} {
				if err := p.alive(); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return roundTripPoints(cfg, targets[:4]), bridgePoints(cfg, []*target{targets[1], targets[3]}, targets[4:]), nil
}

func roundTripPoints(cfg Config, ts []*target) []RoundTripPoint {
	floor := ts[0]
	var out []RoundTripPoint
	for _, t := range ts {
		for _, n := range cfg.Clients {
			p := RoundTripPoint{Target: t.key, Tool: t.c.tool, Args: string(t.c.args), ResponseBytes: t.respBytes,
				Clients: n, LoadStat: loadStat(t.runs[n])}
			if t != floor {
				p.OverFloor = PairedRatios(runsField(t.runs[n], loadRun.callsPerSec), runsField(floor.runs[n], loadRun.callsPerSec))
			}
			out = append(out, p)
		}
	}
	return out
}

func bridgePoints(cfg Config, direct, bridged []*target) []BridgePoint {
	var out []BridgePoint
	for i, d := range direct {
		b := bridged[i]
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

// prefill creates prefillTasks tasks through the tool.
func prefill(ctx context.Context, e *endpoint) error {
	for range prefillTasks {
		if _, err := e.sessions[0].call(ctx, createCall.tool, createCall.args); err != nil {
			return fmt.Errorf("prefill: %w", err)
		}
	}
	return nil
}

// checkCall makes one call and checks its answer (structured content for
// Kandev tools, a full page for list_tasks_kandev); it returns the size of
// the response body.
func checkCall(ctx context.Context, e *endpoint, c call) (int, error) {
	body, err := e.sessions[0].call(ctx, c.tool, c.args)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", e.name, c.tool, err)
	}
	if c.tool == FloorTool {
		return len(body), nil
	}
	sc, err := structured(body)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", e.name, c.tool, err)
	}
	if c.tool == listCall.tool {
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		want := prefillTasks
		if string(c.args) == string(listSmallCall.args) {
			want = 5
		}
		if err := json.Unmarshal(sc, &l); err != nil {
			return 0, fmt.Errorf("%s %s: %w", e.name, c.tool, err)
		}
		if len(l.Items) != want {
			return 0, fmt.Errorf("%s %s: got %d items, want a full page of %d", e.name, c.tool, len(l.Items), want)
		}
	}
	return len(body), nil
}
