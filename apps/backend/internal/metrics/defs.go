package metrics

import (
	"fmt"
	"strings"
)

// Def declares one metric family: every family the backend registers is
// declared here, once, and registered by name (an undeclared name panics
// at start-up), so the Operations page's table (TestOperationsDocsList
// EveryMetric) is exactly what /metrics can show.
type Def struct {
	Name   string
	Type   string // counter, gauge or histogram
	Labels []string
	Help   string
	// When is when the family is present ("" always).
	When string
}

// defs are the declared families, in the order the docs list them.
var defs = []Def{
	{Name: "kandev_action_calls_total", Type: "counter", Labels: []string{"action", "caller", "outcome"},
		Help: "Action calls through the action registry (every transport: WebSocket, CLI, board, the /mcp endpoint, agents' bridges), by action, caller (operator or session) and outcome (ok, refused, error)."},
	{Name: "kandev_action_call_duration_seconds", Type: "histogram", Labels: []string{"action"},
		Help: "Time from an action call's dispatch to its answer, by action."},
	{Name: "kandev_mcp_tool_calls_total", Type: "counter", Labels: []string{"tool", "outcome"},
		Help: "Tool calls on this backend's MCP endpoint (/mcp), by tool and outcome; proxied upstream tools count as tool=\"upstream\"."},
	{Name: "kandev_mcp_tool_call_duration_seconds", Type: "histogram", Labels: []string{"tool"},
		Help: "Time from a tool call's arrival at the validating wrapper to its result, by tool."},
	{Name: "kandev_bridge_tool_calls_total", Type: "counter", Labels: []string{"tool", "outcome"},
		Help: "Tool calls agents' `kandev mcp` bridges answered, by tool and outcome, as the bridges report them (every 10 s and when they stop); arguments refused by a tool's schema never leave the bridge and are counted only here. Proxied upstream tools count as tool=\"upstream\"."},
	{Name: "kandev_upstream_calls_total", Type: "counter", Labels: []string{"where", "outcome"},
		Help: "Calls of proxied upstream MCP tools, by where the gateway ran (mcp: this backend's /mcp; bridge: agents' bridges) and outcome (ok, tool_error, invalid_arguments, unavailable, timeout, cancelled, upstream_error, too_large, invalid_result, internal, panic)."},
	{Name: "kandev_refusals_total", Type: "counter", Labels: []string{"where", "kind"},
		Help: "Calls refused or failed, by where (action, mcp or bridge) and kind (an error code such as VALIDATION_ERROR or NOT_FOUND, invalid_arguments, panic, or upstream_* for a proxied call the upstream side failed or refused)."},
	{Name: "kandev_store_write_transaction_duration_seconds", Type: "histogram",
		Help: "Time a write transaction took from the caller's side: on SQLite its wait for and share of a group commit, on PostgreSQL the transaction with its retries."},
	{Name: "kandev_store_commits_total", Type: "counter", Help: "Write transactions this backend committed (on SQLite, group commits)."},
	{Name: "kandev_store_writes_total", Type: "counter",
		Help: "Writes those commits held: rate(kandev_store_writes_total) / rate(kandev_store_commits_total) is the mean group-commit batch size."},
	{Name: "kandev_store_transaction_retries_total", Type: "counter", Help: "PostgreSQL transactions run again after a serialization failure (0 on SQLite)."},
	{Name: "kandev_tasks_queued", Type: "gauge",
		Help: "Tasks waiting for room on a step whose WIP limit is reached, on the whole board (read from the database at each scrape; NaN when it cannot answer within 2 s)."},
	{Name: "kandev_websocket_connections", Type: "gauge", Help: "WebSocket connections open now (board, CLI, agents' MCP bridges)."},
	{Name: "kandev_agents_running", Type: "gauge", Labels: []string{"agent_type", "executor"}, When: "agents launch here",
		Help: "Agent processes running now on this backend, by agent type and executor (local or docker)."},
	{Name: "kandev_agent_queue_length", Type: "gauge", When: "agents launch here", Help: "Sessions waiting for an agent slot (--max-agents) on this backend."},
	{Name: "kandev_agent_turns_total", Type: "counter", Labels: []string{"stop_reason"}, When: "agents launch here",
		Help: "Agent turns ended on this backend, by how they ended (end_turn, max_tokens, max_turn_requests, refusal, cancelled, error, other)."},
	{Name: "kandev_agent_turn_duration_seconds", Type: "histogram", When: "agents launch here", Help: "How long agent turns ran, from the prompt to its answer."},
	{Name: "kandev_cluster_event_lag_seconds", Type: "histogram", When: "PostgreSQL",
		Help: "How long after another backend appended an event it was delivered here (on both backends' clocks, so skew shows in it)."},
	{Name: "kandev_cluster_events_dropped_total", Type: "counter", When: "PostgreSQL",
		Help: "Events this backend could not queue for the other backends (its queue stayed full)."},
	{Name: "kandev_cluster_lease_age_seconds", Type: "gauge", When: "PostgreSQL",
		Help: "How long ago this backend last renewed its lease; at or past kandev_cluster_lease_ttl_seconds the other backends take over its sessions."},
	{Name: "kandev_cluster_lease_ttl_seconds", Type: "gauge", When: "PostgreSQL",
		Help: "How long a backend's lease lasts unrenewed (--lease-ttl)."},
	{Name: "kandev_cluster_lease_renewal_failures_total", Type: "counter", When: "PostgreSQL",
		Help: "Renewals of this backend's lease that failed (the database did not answer or refused)."},
	{Name: "kandev_agent_sessions_taken_over_total", Type: "counter", When: "agents launch here",
		Help: "Sessions this backend claimed because the backend that ran them was gone (a previous process of its own, or another backend whose lease lapsed)."},
}

// Defs returns the declared families.
func Defs() []Def { return append([]Def(nil), defs...) }

// def is the declared family name, of type typ with labels.
func def(name, typ string, labels int) Def {
	for _, d := range defs {
		if d.Name == name {
			if d.Type != typ || len(d.Labels) != labels {
				panic(fmt.Sprintf("metrics: %s is declared a %s with %d labels", name, d.Type, len(d.Labels)))
			}
			return d
		}
	}
	panic("metrics: undeclared family " + name)
}

// DocTable is the Operations page's table of the declared families.
func DocTable() string {
	var b strings.Builder
	b.WriteString("| metric | type | labels | present | meaning |\n|---|---|---|---|---|\n")
	for _, d := range defs {
		labels := "—"
		if len(d.Labels) > 0 {
			labels = "`" + strings.Join(d.Labels, "`, `") + "`"
		}
		when := d.When
		if when == "" {
			when = "always"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.Name, d.Type, labels, when, strings.ReplaceAll(d.Help, "|", "\\|"))
	}
	return b.String()
}
