package bench

import (
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream"
)

// writeUpstream renders section 7.
func writeUpstream(b *strings.Builder, r *Results) {
	b.WriteString("## 10. Upstream gateway\n\n")
	b.WriteString("What proxying an MCP server through `kandev mcp` costs (see [upstream MCP servers](upstream-mcp.md)): " +
		"the bounded estimate plus the secure compile of every tool schema when a server's tools are listed, " +
		"the same for each hostile schema of the test fixture (with the limit that stopped it), and a no-op call " +
		"through the gateway against the same call made to the upstream server directly.\n\n")
	u := r.Upstream
	if u == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	fmt.Fprintf(b, "A typical %d-tool server (%d schema bytes in all): estimate + compile of every tool %.2f ms p50, %.2f ms p99 (%d runs).\n\n",
		u.TypicalTools, u.TypicalBytes, u.Typical.P50Ms, u.Typical.P99Ms, u.Typical.Samples)
	b.WriteString("| hostile schema | bytes | stopped by | estimate (+ compile when served) p50 | p99 |\n|---|---|---|---|---|\n")
	for _, c := range u.Cases {
		limit := c.Limit
		if limit == "" {
			limit = "served"
		}
		fmt.Fprintf(b, "| %s: %s | %d | %s | %.3f ms | %.3f ms |\n", c.Name, c.Note, c.Bytes, limit, c.Time.P50Ms, c.Time.P99Ms)
	}
	fmt.Fprintf(b, "\nThe slowest refused schema is %s (%s): %.3f ms p50.\n\n", u.Worst.Name, u.Worst.Limit, u.Worst.Time.P50Ms)
	if len(u.Calls) > 0 {
		b.WriteString("Per call, one client, sequential stdio calls of the fixture's `echo` tool from mcp-go's client:\n\n")
		b.WriteString("| tool | clients | direct p50 / p99 | through kandev mcp p50 / p99 | gateway / direct p50 | added p50 |\n|---|---|---|---|---|---|\n")
		for _, c := range u.Calls {
			fmt.Fprintf(b, "| %s | %d | %.3f / %.3f ms | %.3f / %.3f ms | %.2f× | %+.3f ms |\n", c.Tool, c.Clients,
				c.Direct.P50Ms, c.Direct.P99Ms, c.Gateway.P50Ms, c.Gateway.P99Ms, c.OverDirect, c.AddedP50Ms)
		}
		b.WriteString("\n")
	}
	writeUpstreamBudget(b, u.Budget)
}

// writeUpstreamBudget renders the byte budgets' measurement.
func writeUpstreamBudget(b *strings.Builder, u *UpstreamBudget) {
	if u == nil {
		return
	}
	fmt.Fprintf(b, "Byte budgets (see [upstream MCP servers](upstream-mcp.md#byte-budgets)): the hostile fixture plus %d typical tools "+
		"behind `kandev mcp`, each tool measured as its entry of the `tools/list` the agent is sent:\n\n", budgetTypical)
	b.WriteString("| budgets | tools served | largest tool | its bytes | all served tools' bytes |\n|---|---|---|---|---|\n")
	fmt.Fprintf(b, "| defaults (%d B per tool, %d B per server) | %d | %s | %d | %d |\n", u.ToolBudget, u.ServerBudget,
		u.Budgeted.Served, u.Budgeted.Largest, u.Budgeted.LargestBytes, u.Budgeted.TotalBytes)
	fmt.Fprintf(b, "| highest (max_tool_bytes and max_server_bytes at their maximum) | %d | %s | %d | %d |\n\n",
		u.Unbudgeted.Served, u.Unbudgeted.Largest, u.Unbudgeted.LargestBytes, u.Unbudgeted.TotalBytes)
	fmt.Fprintf(b, "At the defaults the operator's `kandev session upstreams` shows these byte-budget refusals: %d `over_tool_budget`, %d `over_server_budget`.\n\n",
		u.Reported[upstream.LimitOverToolBudget], u.Reported[upstream.LimitOverServerBudget])
}

// upstreamAnalysis explains a missed gateway / direct target from the
// measured figures.
func upstreamAnalysis(r *Results) string {
	if r.Upstream == nil || len(r.Upstream.Calls) == 0 {
		return ""
	}
	c := r.Upstream.Calls[0]
	rest := c.Gateway.P50Ms - 2*c.Direct.P50Ms
	return fmt.Sprintf("**Gateway against a direct upstream call.** The fixture's `echo` does no work, so the figure compares "+
		"transport paths: a direct call crosses one stdio process boundary (client → fixture, %.3f ms p50), a call through "+
		"the gateway two (client → `kandev mcp` → fixture), so it cannot cost less than about twice the direct call. "+
		"What is left of its %.3f ms p50 beyond two direct hops, %.3f ms, is `kandev mcp` itself: the JSON gate, decoding "+
		"and validating the arguments, encoding the outbound call and decoding the result. The added time per call "+
		"(%+.3f ms) is fixed; for an upstream tool that does real work it is a small share of the call.",
		c.Direct.P50Ms, c.Gateway.P50Ms, rest, c.AddedP50Ms)
}
