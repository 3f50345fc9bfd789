package upstream_test

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/escape"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
)

// budgetServer is the stdio fixture (a child process) with extra tools and
// the given budgets (0: the defaults).
func budgetServer(t *testing.T, o fixture.Options, toolBytes, serverBytes int) (kanban.MCPServerConfig, func() []fixture.Event) {
	cfg, events := stdioServer(t, "normal")
	maps.Copy(cfg.Env, o.Env())
	cfg.MaxToolBytes, cfg.MaxServerBytes = toolBytes, serverBytes
	return cfg, events
}

// advertised is the gateway's upstream tools as a client is sent them: each
// fx__ tool's entry of a real tools/list answer, by name.
func (g *gw) advertised() map[string][]byte {
	g.t.Helper()
	ctx := context.Background()
	g.srv.MCP().HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"budget-test","version":"1"}}}`))
	b, err := json.Marshal(g.srv.MCP().HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)))
	if err != nil {
		g.t.Fatal(err)
	}
	var resp struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		g.t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, raw := range resp.Result.Tools {
		var tl struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &tl); err != nil {
			g.t.Fatal(err)
		}
		if name, ok := strings.CutPrefix(tl.Name, "fx__"); ok {
			out[name] = raw
		}
	}
	return out
}

// refusedBy is the report's refused tools by name, each checked to pass the
// backend's rules.
func (g *gw) refusedBy() map[string]kanban.RefusedTool {
	g.t.Helper()
	rep := g.report()
	if rep.State != kanban.UpstreamReady {
		g.t.Fatalf("state %s (%s), want ready", rep.State, rep.Detail)
	}
	if err := kanban.ValidateUpstreams([]kanban.UpstreamServer{rep}); err != nil {
		g.t.Fatalf("the report would be refused by the backend: %v", err)
	}
	out := map[string]kanban.RefusedTool{}
	for _, r := range rep.Refused {
		if escape.Needed(r.Reason) {
			g.t.Errorf("reason %q is not escaped", r.Reason)
		}
		out[r.Tool] = r
	}
	return out
}

var advertisedSize = regexp.MustCompile(`as advertised the tool is (\d+) bytes; the budget is (\d+) bytes per tool \(max_tool_bytes\)`)

// TestToolBudget: a tool whose tools/list entry is over max_tool_bytes is
// not listed, not callable (the error names no value of the call, and
// nothing goes upstream) and reported as over_tool_budget with its size;
// the tools under the budget still work. The size reported is the entry a
// client is sent once the budget allows it, and the budget holds at that
// exact size and not one byte below.
func TestToolBudget(t *testing.T) {
	t.Parallel()
	const hugeSchema = 20_000
	g := budgetGW(t, fixture.Options{Huge: hugeSchema}, 0, 0)
	adv := g.advertised()
	if _, ok := adv["huge"]; ok {
		t.Fatal("fx__huge is listed, want it hidden (over the default per-tool budget)")
	}
	for name, raw := range adv {
		if len(raw) > kanban.DefaultUpstreamToolBytes {
			t.Errorf("fx__%s is advertised in %d bytes, over the default budget %d", name, len(raw), kanban.DefaultUpstreamToolBytes)
		}
	}
	r, ok := g.refusedBy()["huge"]
	m := advertisedSize.FindStringSubmatch(r.Reason)
	if !ok || r.Limit != upstream.LimitOverToolBudget || m == nil || m[2] != strconv.Itoa(kanban.DefaultUpstreamToolBytes) {
		t.Fatalf("report for huge: got %+v, want over_tool_budget with its size and the budget %d", r, kanban.DefaultUpstreamToolBytes)
	}
	t.Logf("reported: %s %s %s", r.Tool, r.Limit, r.Reason)
	size, _ := strconv.Atoi(m[1])
	if size <= hugeSchema {
		t.Fatalf("reported size %d, want more than the schema's %d bytes", size, hugeSchema)
	}
	_, err := g.cl.CallTool(context.Background(), callReq("fx__huge", `{"secret-CANARY":1}`))
	if err == nil || !strings.Contains(err.Error(), "unknown tool") || strings.Contains(err.Error(), "huge") || strings.Contains(err.Error(), "CANARY") {
		t.Fatalf("calling fx__huge: got %v, want an unknown-tool error naming nothing of the call", err)
	}
	if got, isErr := g.call(context.Background(), "fx__echo", `{"text":"under","times":2}`); isErr || got != "underunder" {
		t.Fatalf("echo beside the refused tool: got %q (error %v)", got, isErr)
	}
	if n, all := fixture.Calls(g.events(), "huge"), fixture.Calls(g.events(), ""); n != 0 || all != 1 {
		t.Fatalf("fixture counted %d calls of huge and %d in all, want 0 and 1", n, all)
	}

	// At exactly its size the tool is served, and what is sent is that size.
	at := budgetGW(t, fixture.Options{Huge: hugeSchema}, size, kanban.MaxUpstreamServerBytes)
	if raw, ok := at.advertised()["huge"]; !ok || len(raw) != size {
		t.Fatalf("with max_tool_bytes %d: fx__huge advertised in %d bytes (listed %v), want exactly %d", size, len(raw), ok, size)
	}
	if got, isErr := at.call(context.Background(), "fx__huge", `{}`); isErr || got != "ok huge" {
		t.Fatalf("fx__huge within its budget: got %q (error %v)", got, isErr)
	}
	below := budgetGW(t, fixture.Options{Huge: hugeSchema}, size-1, kanban.MaxUpstreamServerBytes)
	if _, ok := below.advertised()["huge"]; ok || below.refusedBy()["huge"].Limit != upstream.LimitOverToolBudget {
		t.Fatalf("with max_tool_bytes %d: fx__huge listed %v, want refused as over_tool_budget", size-1, ok)
	}
}

// budgetGW is a gateway to a budgetServer.
func budgetGW(t *testing.T, o fixture.Options, toolBytes, serverBytes int) *gw {
	t.Helper()
	cfg, events := budgetServer(t, o, toolBytes, serverBytes)
	return newGW(t, cfg, events)
}

// typicalTools is enough typical tools to pass the default server budget.
const typicalTools = 60

// nameOrderAdmission is what the server budget must admit: with every
// tool's advertised entry (a run without the budget), tools in name order
// while the total fits.
func nameOrderAdmission(sizes map[string][]byte, limit int) []string {
	var served []string
	held := 0
	for _, name := range slices.Sorted(maps.Keys(sizes)) {
		if held+len(sizes[name]) > limit {
			break
		}
		held += len(sizes[name])
		served = append(served, name)
	}
	return served
}

// allSizes lists the fixture's tools with the highest server budget: every
// tool's advertised entry.
func allSizes(t *testing.T, o fixture.Options) map[string][]byte {
	g := budgetGW(t, o, 0, kanban.MaxUpstreamServerBytes)
	all := g.advertised()
	if want := 7 + o.Typical; len(all) != want {
		t.Fatalf("with the highest server budget: %d tools listed, want %d", len(all), want)
	}
	return all
}

// checkServerBudget: the listed tools are exactly want (a name-order
// prefix), fit the budget, work, and every other tool is reported as
// over_server_budget.
func checkServerBudget(t *testing.T, g *gw, all map[string][]byte, want []string, limit int) {
	t.Helper()
	adv := g.advertised()
	if got := slices.Sorted(maps.Keys(adv)); !slices.Equal(got, want) {
		t.Fatalf("served %v, want %v", got, want)
	}
	total := 0
	for name, raw := range adv {
		total += len(raw)
		if string(raw) != string(all[name]) {
			t.Errorf("fx__%s advertised differently under the budget", name)
		}
	}
	if total > limit {
		t.Fatalf("served tools take %d bytes, over the budget %d", total, limit)
	}
	refused := g.refusedBy()
	for name := range all {
		r, isRefused := refused[name]
		switch _, served := adv[name]; {
		case served && isRefused:
			t.Errorf("%s is both served and refused", name)
		case !served && (!isRefused || r.Limit != upstream.LimitOverServerBudget || !strings.Contains(r.Reason, "max_server_bytes")):
			t.Errorf("%s: got refusal %+v, want over_server_budget", name, r)
		case !served:
			t.Logf("reported: %s %s %s", r.Tool, r.Limit, r.Reason)
		}
	}
	if rep := g.report(); rep.ToolsServed != len(want) || rep.ToolsRefused != len(all)-len(want) {
		t.Fatalf("report counts %d served / %d refused, want %d / %d", rep.ToolsServed, rep.ToolsRefused, len(want), len(all)-len(want))
	}
	if got, isErr := g.call(context.Background(), "fx__echo", `{"text":"fits"}`); isErr || got != "fits" {
		t.Fatalf("echo under the server budget: got %q (error %v)", got, isErr)
	}
}

// TestServerBudget: a server whose tools take more than max_server_bytes
// as advertised serves the name-order prefix that fits (at the default
// budget and at a configured one); the rest are hidden, uncallable and
// reported as over_server_budget.
func TestServerBudget(t *testing.T) {
	t.Parallel()
	o := fixture.Options{Typical: typicalTools}
	all := allSizes(t, o)
	sum := 0
	for _, raw := range all {
		sum += len(raw)
	}
	if sum <= kanban.DefaultUpstreamServerBytes {
		t.Fatalf("the fixture's tools take %d bytes, want more than the default budget %d", sum, kanban.DefaultUpstreamServerBytes)
	}
	for _, limit := range []int{kanban.DefaultUpstreamServerBytes, 20_000} {
		cfgBytes := limit
		if limit == kanban.DefaultUpstreamServerBytes {
			cfgBytes = 0 // the default
		}
		g := budgetGW(t, o, 0, cfgBytes)
		want := nameOrderAdmission(all, limit)
		checkServerBudget(t, g, all, want, limit)
		last := slices.Sorted(maps.Keys(all))[len(want)]
		if _, err := g.cl.CallTool(context.Background(), callReq("fx__"+last, `{}`)); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("calling fx__%s (over the server budget): got %v, want an unknown-tool error", last, err)
		}
		if n := fixture.Calls(g.events(), last); n != 0 {
			t.Fatalf("fixture counted %d calls of %s, want 0", n, last)
		}
	}
}

// TestServerBudgetNameOrder: the server budget admits tools in name order,
// whatever order the server lists them in — listed in reverse, the same
// tools are served and refused as listed in order, and admitting them in
// listed order would have served others.
func TestServerBudgetNameOrder(t *testing.T) {
	t.Parallel()
	o := fixture.Options{Typical: typicalTools, Reverse: true}
	all := allSizes(t, o)
	want := nameOrderAdmission(all, kanban.DefaultUpstreamServerBytes)
	// In listed order (the 7 ordinary tools, then tool_59 down to tool_00)
	// the budget would keep the high-numbered tools instead.
	listed := []string{"echo", "sleep", "crash", "grow", "big", "structured", "record"}
	for i := typicalTools - 1; i >= 0; i-- {
		listed = append(listed, fixture.Typical(typicalTools)[i].Name)
	}
	var byListing []string
	held := 0
	for _, name := range listed {
		if held+len(all[name]) > kanban.DefaultUpstreamServerBytes {
			break
		}
		held += len(all[name])
		byListing = append(byListing, name)
	}
	if slices.Sort(byListing); slices.Equal(byListing, want) {
		t.Fatal("the fixture cannot tell name order from listed order; make it list more tools")
	}
	g := budgetGW(t, o, 0, 0)
	checkServerBudget(t, g, all, want, kanban.DefaultUpstreamServerBytes)
	forward := budgetGW(t, fixture.Options{Typical: typicalTools}, 0, 0)
	if a, b := slices.Sorted(maps.Keys(g.advertised())), slices.Sorted(maps.Keys(forward.advertised())); !slices.Equal(a, b) {
		t.Fatalf("listed in reverse served %v, listed in order %v; want the same", a, b)
	}
}
