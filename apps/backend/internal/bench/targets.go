package bench

import (
	"fmt"
	"strings"
)

// References are the reference figures, measured on this kind of
// machine for a comparable production MCP server and for mcp-go itself.
// They are shown next to ours; only the targets are judged met or missed.
var References = []struct{ What, Figure string }{
	{"bare cached Validate of a 12-field create-task object", "about 6 µs"},
	{"mcp-go's built-in input validation, added per call", "about 23 µs"},
	{"raw mcp-go Streamable HTTP floor (no-op tool, own process)", "about 3.3k calls/s at 1 client, saturating near 11k at 8"},
	{"a comparable production MCP server's mode switch", "about 3 ms"},
	{"its tools/list in task mode / external mode", "41.5 KB / 30.0 KB"},
}

// Target limits from the issues. The "mcp-go built-in ≥ 4× the wrapper
// check" target is retired (issue 17): it is bounded by mcp-go's own
// overhead around the same Validate; section 1 still shows the ratio.
const (
	maxWrapperOverBare    = 1.1
	maxRefusedOverBare    = 1.3
	minListSmallOverNoop  = 0.5
	minListOverSame       = 0.8
	minCreateOverFloor    = 0.3
	maxPageBytes          = 25_000 // one 50-task page of tasks with 2 KB prompts
	maxBridgeAddedP50Ms   = 1
	maxModeSwitchMs       = 0.3
	maxFirstPageMs        = 5
	maxFirstToolCallMs    = 150
	targetsAtClients      = 8
	bridgeTargetClients   = 1
	refTaskModeBytes      = 41_500 // 41.5 KB, counted as 1 KB = 1000 bytes (the stricter reading)
	refExternalModeBytes  = 30_000
	refConfigModeBytes    = 20_700
	refOfficeModeBytes    = 14_800
	maxBoardLoadMs        = 1000
	maxBoardBytes         = 300_000
	maxCardLatencyMs      = 150
	maxGatewayOverDirect  = 1.2
	maxCrossBackendMs     = 20
	minPostgresOverSQLite = 0.8
	maxChangesMs          = 200
	maxTerminalEchoMs     = 10
	maxChangesTabMs       = 1000
)

// modeBudgets are the tools/list byte budgets per mode (the reference's).
var modeBudgets = map[string]int{
	"task": refTaskModeBytes, "external": refExternalModeBytes,
	"config": refConfigModeBytes, "office": refOfficeModeBytes,
}

func atMost(section, name string, v, limit float64, unit string) Target {
	return Target{Section: section, Name: name, Value: v, Op: "<=", Limit: limit, Unit: unit, Met: v <= limit}
}

func atLeast(section, name string, v, limit float64, unit string) Target {
	return Target{Section: section, Name: name, Value: v, Op: ">=", Limit: limit, Unit: unit, Met: v >= limit}
}

func unmeasured(section, name, op string, limit float64, unit, why string) Target {
	return Target{Section: section, Name: name, Op: op, Limit: limit, Unit: unit, Note: "not measured: " + why}
}

// Evaluate compares the measured figures with the targets.
func Evaluate(r *Results) []Target {
	ts := validationTargets(r)
	ts = append(ts, roundTripTargets(r)...)
	for _, b := range r.Bridge {
		if b.Clients == bridgeTargetClients {
			ts = append(ts, atMost("3", fmt.Sprintf("bridge adds to p50, %s, %d client", shortTool(b.Tool), b.Clients), b.AddedP50Ms, maxBridgeAddedP50Ms, "ms"))
		}
	}
	for _, m := range r.ModeSwitch {
		ts = append(ts, atMost("4", "mode switch into "+m.Mode+" (p50)", m.Time.P50Ms, maxModeSwitchMs, "ms"))
	}
	for _, l := range r.Store.Lists {
		if strings.HasSuffix(l.Name, "first page") {
			ts = append(ts, atMost("5", fmt.Sprintf("list_tasks first page of %d tasks, %s (p50)", r.Store.Tasks, strings.TrimSuffix(l.Name, ", first page")),
				l.Tool.P50Ms, maxFirstPageMs, "ms"))
		}
	}
	for _, c := range r.Catalog {
		limit, ok := modeBudgets[c.Mode]
		if !ok {
			continue
		}
		t := atMost("6", "tools/list bytes, "+c.Mode+" mode", float64(c.Bytes), float64(limit), "B")
		if c.Open > 0 || c.Undescribed > 0 {
			t.Met = false
			t.Note = fmt.Sprintf("%d open objects, %d undescribed properties", c.Open, c.Undescribed)
		}
		ts = append(ts, t)
	}
	if b := r.Board; b != nil {
		ts = append(ts, atMost("7", fmt.Sprintf("board with %d tasks: navigation to rendered board (median)", b.Tasks), b.LoadMs, maxBoardLoadMs, "ms"),
			atMost("7", fmt.Sprintf("board with %d tasks: bytes sent, compressed", b.Tasks), float64(b.Bytes), maxBoardBytes, "B"),
			atMost("7", "create_task over /mcp → card visible (p50)", b.CardLatency.P50Ms, maxCardLatencyMs, "ms"))
	}
	if a := r.Agents; a != nil {
		ts = append(ts, atMost("8", "create_task → the mock agent's first tool call in the backend (p50)", a.FirstToolCall.P50Ms, maxFirstToolCallMs, "ms"))
	}
	if u := r.Upstream; u != nil {
		for _, c := range u.Calls {
			if c.Clients == 1 {
				ts = append(ts, atMost("10", fmt.Sprintf("gateway / direct upstream call p50, %s, %d client", c.Tool, c.Clients), c.OverDirect, maxGatewayOverDirect, "×"))
			}
		}
		ts = append(ts, budgetTargets(u)...)
	}
	ts = append(ts, changesTargets(r)...)
	ts = append(ts, terminalTargets(r)...)
	if p := r.Postgres; p != nil {
		ts = append(ts, atMost("11", "task.create on backend A → task.created on backend B (p50)", p.CrossBackend.P50Ms, maxCrossBackendMs, "ms"))
		ts = append(ts, postgresTargets(p)...)
	}
	return ts
}

// postgresTargets are section 11's engine ratios at targetsAtClients and
// the big board's first pages on PostgreSQL.
func postgresTargets(p *PostgresRun) []Target {
	var ts []Target
	for _, e := range p.RoundTrip {
		if e.Clients == targetsAtClients {
			ts = append(ts, atLeast("11", fmt.Sprintf("PostgreSQL / SQLite calls/s, %s `%s`, %d clients", shortTool(e.Tool), e.Args, e.Clients),
				e.PostgresOverSQLite, minPostgresOverSQLite, "×"))
		}
	}
	if p.Scale != nil {
		for _, l := range p.Scale.Lists {
			if strings.HasSuffix(l.Name, "first page") {
				ts = append(ts, atMost("11", fmt.Sprintf("PostgreSQL store listing, first page of %d tasks, %s (p50)", p.Scale.Tasks,
					strings.TrimSuffix(l.Name, ", first page")), l.Store.P50Ms, maxFirstPageMs, "ms"))
			}
		}
	}
	return ts
}

// validationTargets are section 1's: the wrapper's check against a bare
// Validate, per payload case.
func validationTargets(r *Results) []Target {
	var ts []Target
	for _, v := range r.Validation {
		if v.Missing {
			ts = append(ts, unmeasured("1", "wrapper check / bare Validate, "+v.Case, "<=", maxWrapperOverBare, "×", v.Note))
			continue
		}
		limit := maxWrapperOverBare
		if !v.Valid {
			limit = maxRefusedOverBare
		}
		t := atMost("1", "wrapper check / bare Validate, "+v.Case, v.WrapperOverBare, limit, "×")
		t.Note = v.Note
		ts = append(ts, t)
	}
	return ts
}

func shortTool(name string) string { return strings.TrimSuffix(name, "_kandev") }

// roundTripTargets are section 2's targets: throughput against the
// floors at targetsAtClients clients, every acknowledged create durable,
// and the size of a 50-task page.
func roundTripTargets(r *Results) []Target {
	var ts []Target
	for _, p := range r.RoundTrip {
		if p.Clients != targetsAtClients {
			continue
		}
		switch p.Target {
		case "list_tasks":
			ts = append(ts, atLeast("2", fmt.Sprintf("(b) list_tasks, 50-task page / (a′) its same-bytes floor, calls/s at %d clients", p.Clients),
				p.OverSameBytes, minListOverSame, "×"))
			ts = append(ts, atMost("2", fmt.Sprintf("bytes of a %d-task page of tasks with %d-byte prompts (structured content)", prefillTasks, prefillPromptLen),
				float64(p.PageBytes), maxPageBytes, "B"))
		case "list_tasks_5":
			ts = append(ts, atLeast("2", fmt.Sprintf("(b) list_tasks, 5-task page / (a) no-op floor, calls/s at %d clients", p.Clients),
				p.OverFloor, minListSmallOverNoop, "×"))
		case "create_task":
			t := atLeast("2", fmt.Sprintf("(c) create_task / (a) no-op floor, calls/s at %d clients, every acknowledged create durable", p.Clients),
				p.OverFloor, minCreateOverFloor, "×")
			if d := r.Durability; d == nil {
				t.Met, t.Note = false, "durability not checked"
			} else if d.Found < d.Acknowledged {
				t.Met, t.Note = false, fmt.Sprintf("only %d of %d acknowledged creates found after kill -9", d.Found, d.Acknowledged)
			} else {
				t.Note = fmt.Sprintf("%d of %d acknowledged creates found after kill -9", d.Found, d.Acknowledged)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// changesTargets are section 12's targets: the changes list and one
// file's diff of a 1,000-file change, server side, and its Changes tab
// drawn in a browser.
func changesTargets(r *Results) []Target {
	c := r.Changes
	if c == nil {
		return nil
	}
	return []Target{
		atMost("12", fmt.Sprintf("task.changes.list of a %d-file change, first page of 200 (p50)", c.Files), c.List.P50Ms, maxChangesMs, "ms"),
		atMost("12", fmt.Sprintf("task.changes.diff of one file of a %d-file change (p50)", c.Files), c.Diff.P50Ms, maxChangesMs, "ms"),
		atMost("12", fmt.Sprintf("Changes tab of a %d-file change: click to rendered tab in Chromium (median)", c.Files), c.TabLoadMs, maxChangesTabMs, "ms"),
	}
}
