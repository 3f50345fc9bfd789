package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
	"github.com/kandev/kandev/apps/backend/internal/schemabudget"
)

// typicalTools is the size of the "typical upstream server" of section 7.
const typicalTools = 50

// UpstreamBench is section 7: the gateway's cost.
type UpstreamBench struct {
	// Typical is estimating and compiling every tool of a 50-tool server.
	TypicalTools int         `json:"typical_tools"`
	TypicalBytes int         `json:"typical_bytes"`
	Typical      LatencyStat `json:"typical"`
	// Cases is every hostile case: the limit that stopped it (empty when
	// served) and the time of its estimate (and compile, when served).
	Cases []UpstreamCase `json:"cases"`
	// Worst is the slowest refused case.
	Worst UpstreamCase `json:"worst_refused"`
	// Calls compare a no-op call through `kandev mcp` with the same call
	// made to the upstream server directly, both over stdio.
	Calls []UpstreamCall `json:"calls"`
	// Budget is the proxied tools as advertised, against the byte budgets.
	Budget *UpstreamBudget `json:"budget,omitempty"`
}

// UpstreamCase is one hostile schema.
type UpstreamCase struct {
	Name  string      `json:"name"`
	Note  string      `json:"note"`
	Bytes int         `json:"bytes"`
	Limit string      `json:"limit"`
	Time  LatencyStat `json:"time"`
}

// UpstreamCall is one per-call comparison at a client count.
type UpstreamCall struct {
	Tool       string   `json:"tool"`
	Clients    int      `json:"clients"`
	Direct     LoadStat `json:"direct"`
	Gateway    LoadStat `json:"gateway"`
	OverDirect float64  `json:"p50_over_direct"` // gateway p50 / direct p50, paired per repetition
	AddedP50Ms float64  `json:"added_p50_ms"`
}

// MeasureUpstream runs section 7.
func MeasureUpstream(ctx context.Context, cfg Config) (*UpstreamBench, error) {
	out := &UpstreamBench{TypicalTools: typicalTools}
	typical := fixture.Typical(typicalTools)
	for _, c := range typical {
		out.TypicalBytes += len(c.Schema)
	}
	var lat []time.Duration
	for rep := range cfg.Reps * 4 {
		cfg.Logf("upstream: typical server, repetition %d/%d", rep+1, cfg.Reps*4)
		t0 := time.Now()
		for _, c := range typical {
			if _, err := argcheck.CompileWith(c.Name, []byte(c.Schema), argcheck.Options{}); err != nil {
				return nil, fmt.Errorf("typical tool %s: %w", c.Name, err)
			}
		}
		lat = append(lat, time.Since(t0))
	}
	out.Typical = latency(lat)
	for _, c := range fixture.Hostile() {
		if c.Refused == "name" {
			continue
		}
		uc, err := measureCase(c, cfg)
		if err != nil {
			return nil, err
		}
		out.Cases = append(out.Cases, uc)
		if c.Refused != "" && uc.Time.P50Ms >= out.Worst.Time.P50Ms {
			out.Worst = uc
		}
	}
	if err := measureUpstreamCalls(ctx, cfg, out); err != nil {
		return nil, err
	}
	return out, nil
}

func measureCase(c fixture.Case, cfg Config) (UpstreamCase, error) {
	uc := UpstreamCase{Name: c.Name, Note: c.Note, Bytes: len(c.Schema)}
	schema := []byte(c.Schema)
	var lat []time.Duration
	for range cfg.Reps * 4 {
		t0 := time.Now()
		_, err := argcheck.CompileWith(c.Name, schema, argcheck.Options{})
		lat = append(lat, time.Since(t0))
		var ref *schemabudget.Refusal
		switch {
		case errors.As(err, &ref):
			uc.Limit = string(ref.Limit)
		case err != nil:
			uc.Limit = "compile"
		}
	}
	if want := c.Refused; want != uc.Limit {
		return uc, fmt.Errorf("hostile case %s: refused by %q, want %q", c.Name, uc.Limit, want)
	}
	uc.Time = latency(lat)
	budgetCase(&uc, c)
	return uc, nil
}

func latency(lat []time.Duration) LatencyStat {
	slices.Sort(lat)
	return LatencyStat{P50Ms: ms(Percentile(lat, 50)), P99Ms: ms(Percentile(lat, 99)), Samples: len(lat)}
}

// measureUpstreamCalls times fixture echo calls made by an mcp-go stdio
// client directly to `kandev-bench fixture` and through `kandev mcp`
// proxying the same fixture, alternating per repetition; then, with the
// same backend and session, the byte budgets.
func measureUpstreamCalls(ctx context.Context, cfg Config, out *UpstreamBench) error {
	dataDir, err := mkdir(cfg, "upstream-data")
	if err != nil {
		return err
	}
	be, err := startBackend(ctx, cfg, "serve-upstream", dataDir)
	if err != nil {
		return err
	}
	defer be.stop()
	bs, err := proxiedBenchSession(ctx, cfg, be)
	if err != nil {
		return err
	}
	if out.Calls, err = timeUpstreamCalls(ctx, cfg, be, bs); err != nil {
		return err
	}
	out.Budget, err = measureUpstreamBudget(ctx, cfg, be, bs)
	return err
}

// timeUpstreamCalls is the per-call comparison of measureUpstreamCalls
// (both clients closed when it returns).
func timeUpstreamCalls(ctx context.Context, cfg Config, be *backendProc, bs *benchSession) ([]UpstreamCall, error) {
	env := []string{"UPSTREAM_FIXTURE=normal"}
	direct, err := stdioClient(ctx, cfg.BenchBin, env, "fixture")
	if err != nil {
		return nil, fmt.Errorf("direct fixture: %w", err)
	}
	defer func() { _ = direct.Close() }()
	gw, err := stdioClient(ctx, cfg.KandevBin, []string{"KANDEV_SESSION_TOKEN=" + bs.token}, "mcp", "--backend", be.base, "--session", bs.id)
	if err != nil {
		return nil, fmt.Errorf("kandev mcp: %w", err)
	}
	defer func() { _ = gw.Close() }()
	const tool, args = "echo", `{"text":"ping"}`
	var dP50, gP50 []float64
	var d, g []LoadStat
	for rep := range cfg.Reps {
		cfg.Logf("upstream: per-call overhead, repetition %d/%d", rep+1, cfg.Reps)
		ds, err := timeCalls(ctx, direct, tool, args, cfg.Point)
		if err != nil {
			return nil, err
		}
		gs, err := timeCalls(ctx, gw, "fx__"+tool, args, cfg.Point)
		if err != nil {
			return nil, err
		}
		d, g = append(d, ds), append(g, gs)
		dP50, gP50 = append(dP50, ds.P50Ms), append(gP50, gs.P50Ms)
	}
	return []UpstreamCall{{Tool: tool, Clients: 1, Direct: medianLoad(d), Gateway: medianLoad(g),
		OverDirect: PairedRatios(gP50, dP50), AddedP50Ms: PairedDiffs(gP50, dP50)}}, nil
}

// benchSession is a session made for the upstream section: its id and
// token, its agent profile, and an operator MCP session to configure it.
type benchSession struct {
	id, token, profile string
	op                 *session
}

// proxiedBenchSession creates a session whose profile proxies the fixture
// (`kandev-bench fixture`) as server fx.
func proxiedBenchSession(ctx context.Context, cfg Config, be *backendProc) (*benchSession, error) {
	bs, err := newBenchSession(ctx, cfg, be)
	if err != nil {
		return nil, err
	}
	return bs, bs.proxy(ctx, cfg, "fx", `{"UPSTREAM_FIXTURE":"normal"}`, "")
}

// newBenchSession creates a task and its session and finds its profile.
func newBenchSession(ctx context.Context, cfg Config, be *backendProc) (*benchSession, error) {
	out, err := runCmd(ctx, cfg.WorkDir, []string{"KANDEV_TOKEN=" + be.token}, cfg.KandevBin,
		"session", "create", "--title", "Benchmark upstream session", "--backend", be.base)
	if err != nil {
		return nil, err
	}
	kv := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			kv[k] = v
		}
	}
	hc := newHTTPClient(2)
	op, err := openSession(ctx, hc, be.base+"/mcp", be.token)
	if err != nil {
		return nil, err
	}
	body, err := op.call(ctx, "list_task_sessions_kandev", json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, kv["task_id"])))
	if err != nil {
		return nil, err
	}
	sc, err := structured(body)
	if err != nil {
		return nil, err
	}
	var sessions struct {
		Items []struct {
			ID             string `json:"id"`
			AgentProfileID string `json:"agent_profile_id"`
		} `json:"items"`
	}
	if err := json.Unmarshal(sc, &sessions); err != nil || len(sessions.Items) == 0 {
		return nil, fmt.Errorf("list sessions: %s", body)
	}
	bs := &benchSession{id: kv["session_id"], token: kv["token"], op: op}
	for _, s := range sessions.Items {
		if s.ID == bs.id {
			bs.profile = s.AgentProfileID
		}
	}
	return bs, nil
}

// proxy makes the session's profile proxy `kandev-bench fixture` (and
// nothing else) as server name, with env (a JSON object) and extra config
// keys (",key":value..., or empty).
func (bs *benchSession) proxy(ctx context.Context, cfg Config, name, env, extra string) error {
	bin, err := filepath.Abs(cfg.BenchBin)
	if err != nil {
		return err
	}
	update := fmt.Sprintf(`{"profile_id":%q,"servers":{%q:{"type":"stdio","command":%q,"args":["fixture"],"env":%s,"proxy":true%s}}}`,
		bs.profile, name, bin, env, extra)
	_, err = bs.op.call(ctx, "update_mcp_config_kandev", json.RawMessage(update))
	return err
}

func stdioClient(ctx context.Context, bin string, env []string, args ...string) (*client.Client, error) {
	c, err := client.NewStdioMCPClient(bin, append(os.Environ(), env...), args...)
	if err != nil {
		return nil, err
	}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "kandev-bench", Version: "1"}
	if _, err := c.Initialize(ictx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// timeCalls makes sequential calls for secs seconds and summarizes them.
func timeCalls(ctx context.Context, c *client.Client, tool, args string, secs float64) (LoadStat, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = json.RawMessage(args)
	var lat []time.Duration
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	errs := 0
	for time.Now().Before(deadline) {
		t0 := time.Now()
		res, err := c.CallTool(ctx, req)
		lat = append(lat, time.Since(t0))
		if err != nil {
			return LoadStat{}, fmt.Errorf("call %s: %w", tool, err)
		}
		if res.IsError {
			errs++
		}
	}
	if errs > 0 {
		return LoadStat{}, fmt.Errorf("call %s: %d tool errors", tool, errs)
	}
	slices.Sort(lat)
	return LoadStat{CallsPerSec: float64(len(lat)) / secs, P50Ms: ms(Percentile(lat, 50)), P99Ms: ms(Percentile(lat, 99)), Calls: len(lat)}, nil
}

func medianLoad(xs []LoadStat) LoadStat {
	var cps, p50, p99 []float64
	calls := 0
	for _, x := range xs {
		cps, p50, p99 = append(cps, x.CallsPerSec), append(p50, x.P50Ms), append(p99, x.P99Ms)
		calls += x.Calls
	}
	return LoadStat{CallsPerSec: Median(cps), P50Ms: Median(p50), P99Ms: Median(p99), Calls: calls}
}
