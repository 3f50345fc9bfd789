package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
)

// budgetTypical is how many typical tools the budget server lists beside
// the hostile fixture's, enough to pass the default server budget.
const budgetTypical = 60

// budgetServer is the upstream server of the budget measurement: the
// hostile fixture (its 100 KB property name among them) plus typical tools.
const budgetServer = "hx"

// UpstreamBudget is the proxied tools as `kandev mcp` advertises them to
// the agent (each entry of its tools/list, in bytes), at the default byte
// budgets and, for comparison, at the highest ones, with the refusals the
// operator is shown (`kandev session upstreams`).
type UpstreamBudget struct {
	ToolBudget   int            `json:"tool_budget"`
	ServerBudget int            `json:"server_budget"`
	Budgeted     AdvertisedSet  `json:"budgeted"`
	Unbudgeted   AdvertisedSet  `json:"unbudgeted"` // max_tool_bytes and max_server_bytes at their highest
	Reported     map[string]int `json:"reported"`   // refusals shown to the operator, by limit
}

// AdvertisedSet is one server's tools as advertised.
type AdvertisedSet struct {
	Served       int    `json:"served"`
	Largest      string `json:"largest"`
	LargestBytes int    `json:"largest_bytes"`
	TotalBytes   int    `json:"total_bytes"`
}

// measureUpstreamBudget proxies the budget server for bs's session twice
// (default budgets, then the highest), reads kandev mcp's tools/list as
// sent, and, at the defaults, the refusals the operator sees.
func measureUpstreamBudget(ctx context.Context, cfg Config, be *backendProc, bs *benchSession) (*UpstreamBudget, error) {
	out := &UpstreamBudget{ToolBudget: kanban.DefaultUpstreamToolBytes, ServerBudget: kanban.DefaultUpstreamServerBytes}
	env := fmt.Sprintf(`{"UPSTREAM_FIXTURE":"hostile","UPSTREAM_FIXTURE_TYPICAL":"%d"}`, budgetTypical)
	highest := fmt.Sprintf(`,"max_tool_bytes":%d,"max_server_bytes":%d`, kanban.MaxUpstreamToolBytes, kanban.MaxUpstreamServerBytes)
	for _, run := range []struct {
		extra string
		into  *AdvertisedSet
	}{{"", &out.Budgeted}, {highest, &out.Unbudgeted}} {
		cfg.Logf("upstream: byte budgets, server %s%s", budgetServer, run.extra)
		if err := bs.proxy(ctx, cfg, budgetServer, env, run.extra); err != nil {
			return nil, err
		}
		gw, err := stdioClient(ctx, cfg.KandevBin, []string{"KANDEV_SESSION_TOKEN=" + bs.token}, "mcp", "--backend", be.base, "--session", bs.id)
		if err != nil {
			return nil, fmt.Errorf("kandev mcp: %w", err)
		}
		set, err := advertisedSet(ctx, gw)
		if err == nil && run.extra == "" {
			out.Reported, err = reportedRefusals(ctx, cfg, be, bs.id)
		}
		_ = gw.Close()
		if err != nil {
			return nil, err
		}
		*run.into = set
	}
	return out, nil
}

// advertisedSet reads kandev mcp's tools/list as sent (raw JSON) until the
// budget server's tools are there, and measures them.
func advertisedSet(ctx context.Context, gw *client.Client) (AdvertisedSet, error) {
	prefix := budgetServer + "__"
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; ; i++ {
		resp, err := gw.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION,
			ID: mcp.NewRequestId(int64(1_000_000 + i)), Method: string(mcp.MethodToolsList)})
		if err != nil {
			return AdvertisedSet{}, fmt.Errorf("tools/list: %w", err)
		}
		var page struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if resp.Error != nil || json.Unmarshal(resp.Result, &page) != nil {
			return AdvertisedSet{}, fmt.Errorf("tools/list answered %.200s", resp.Result)
		}
		var set AdvertisedSet
		for _, raw := range page.Tools {
			var t struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(raw, &t) != nil || !strings.HasPrefix(t.Name, prefix) {
				continue
			}
			set.Served++
			set.TotalBytes += len(raw)
			if len(raw) > set.LargestBytes {
				set.Largest, set.LargestBytes = t.Name, len(raw)
			}
		}
		if set.Served > 0 {
			return set, nil
		}
		if time.Now().After(deadline) {
			return set, fmt.Errorf("kandev mcp served no %s tools within 90 s", prefix)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// reportedRefusals counts the byte-budget refusals `kandev session
// upstreams` shows for the session, once the report has arrived.
func reportedRefusals(ctx context.Context, cfg Config, be *backendProc, sessionID string) (map[string]int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		text, err := runCmd(ctx, cfg.WorkDir, []string{"KANDEV_TOKEN=" + be.token}, cfg.KandevBin,
			"session", "upstreams", "--session", sessionID, "--backend", be.base)
		if err != nil {
			return nil, err
		}
		counts := map[string]int{}
		for _, line := range strings.Split(text, "\n") {
			if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[0], budgetServer+"__") {
				counts[f[1]]++
			}
		}
		if counts[upstream.LimitOverToolBudget] > 0 && counts[upstream.LimitOverServerBudget] > 0 {
			return counts, nil
		}
		if time.Now().After(deadline) {
			return counts, fmt.Errorf("the operator saw no byte-budget refusals within 30 s:\n%s", text)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// budgetTargets are the byte budgets' targets: the largest proxied tool
// and one server's tools, as advertised at the defaults.
func budgetTargets(u *UpstreamBench) []Target {
	b := u.Budget
	if b == nil {
		return nil
	}
	tool := atMost("10", "one proxied upstream tool as advertised (largest: "+b.Budgeted.Largest+")", float64(b.Budgeted.LargestBytes), float64(b.ToolBudget), "B")
	server := atMost("10", "one proxied server's tools as advertised ("+strconv.Itoa(b.Budgeted.Served)+" served)", float64(b.Budgeted.TotalBytes), float64(b.ServerBudget), "B")
	note := fmt.Sprintf("rest refused and reported: %d %s, %d %s; at the highest budgets %s is %d B and the server %d B",
		b.Reported[upstream.LimitOverToolBudget], upstream.LimitOverToolBudget, b.Reported[upstream.LimitOverServerBudget], upstream.LimitOverServerBudget,
		b.Unbudgeted.Largest, b.Unbudgeted.LargestBytes, b.Unbudgeted.TotalBytes)
	if b.Reported[upstream.LimitOverToolBudget] == 0 || b.Reported[upstream.LimitOverServerBudget] == 0 {
		tool.Met, server.Met = false, false
	}
	tool.Note, server.Note = note, note
	return []Target{tool, server}
}

// budgetCase marks a hostile case whose schema compiles but whose tool is
// over the default byte budget as the gateway refuses it.
func budgetCase(uc *UpstreamCase, c fixture.Case) {
	if g := c.Gateway(); g != c.Refused {
		uc.Limit = g
	}
}
