package bench

import (
	"fmt"
	"strings"
)

func writePostgres(b *strings.Builder, r *Results) {
	b.WriteString("## 11. PostgreSQL and several backends\n\n")
	p := r.Postgres
	if p == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	fmt.Fprintf(b, "Two `kandev serve` processes, one on SQLite in its data dir and one with `--database` on a throwaway "+
		"PostgreSQL %s cluster on this machine (a Unix socket, `fsync` off as for tests), take the same closed-loop load "+
		"over `/mcp`, point by point in alternation; the ratio is PostgreSQL's calls/s over SQLite's, paired per repetition.\n\n", p.Server)
	b.WriteString("| call | clients | SQLite calls/s | SQLite p50 / p99 ms | PostgreSQL calls/s | PostgreSQL p50 / p99 ms | PostgreSQL / SQLite |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, e := range p.RoundTrip {
		fmt.Fprintf(b, "| %s `%s` | %d | %.0f | %.2f / %.2f | %.0f | %.2f / %.2f | %.2f× |\n", shortTool(e.Tool), e.Args, e.Clients,
			e.SQLite.CallsPerSec, e.SQLite.P50Ms, e.SQLite.P99Ms, e.Postgres.CallsPerSec, e.Postgres.P50Ms, e.Postgres.P99Ms, e.PostgresOverSQLite)
	}
	fmt.Fprintf(b, "\nCross-backend events: two backends on one PostgreSQL database, one WebSocket subscriber on each. %d times, "+
		"`task.create` on backend A, timed from the call until its `task.created` event arrives at each subscriber: A's "+
		"subscriber hears it from A's process, B's through the event log (an insert and a notification of its id, then B "+
		"reads the row).\n\n", p.CrossBackend.Samples)
	b.WriteString("| figure | p50 | p99 |\n|---|---|---|\n")
	fmt.Fprintf(b, "| call on A → event at B's subscriber | %.2f ms | %.2f ms |\n", p.CrossBackend.P50Ms, p.CrossBackend.P99Ms)
	fmt.Fprintf(b, "| call on A → event at A's subscriber | %.2f ms | %.2f ms |\n", p.SameBackend.P50Ms, p.SameBackend.P99Ms)
	fmt.Fprintf(b, "| added by the relay (B minus A, per event) | %.2f ms | %.2f ms |\n\n", p.Relay.P50Ms, p.Relay.P99Ms)
	writePostgresScale(b, r)
}

// writePostgresScale is section 5's board on PostgreSQL: its listings
// beside SQLite's and the plan of each.
func writePostgresScale(b *strings.Builder, r *Results) {
	s := r.Postgres.Scale
	if s == nil || len(s.Lists) == 0 {
		return
	}
	fmt.Fprintf(b, "The big board of section 5 on PostgreSQL: one step holding %d tasks, seeded the same way (%.1f s), "+
		"each listing timed through `Store.ListTaskSummaries` in process, %d sequential calls, beside section 5's SQLite figures.\n\n",
		s.Tasks, s.SeedSeconds, s.Lists[0].Store.Samples)
	b.WriteString("| listing (50 tasks) | arguments | PostgreSQL p50 / p99 | SQLite p50 / p99 |\n|---|---|---|---|\n")
	for i, l := range s.Lists {
		lite := "not measured"
		if i < len(r.Store.Lists) && r.Store.Lists[i].Name == l.Name {
			lite = fmt.Sprintf("%.2f / %.2f ms", r.Store.Lists[i].Store.P50Ms, r.Store.Lists[i].Store.P99Ms)
		}
		fmt.Fprintf(b, "| %s | `%s` | %.2f / %.2f ms | %s |\n", l.Name, l.Args, l.Store.P50Ms, l.Store.P99Ms, lite)
	}
	b.WriteString("\nThe plan PostgreSQL ran for each (`EXPLAIN (ANALYZE, BUFFERS)` of the listing's query, with the table's " +
		"statistics as the seed left them): each page is a walk of a live-task index that stops after its 51 rows.\n\n")
	for _, p := range s.Plans {
		fmt.Fprintf(b, "%s:\n\n```text\n%s\n```\n\n", p.Name, strings.Join(p.Lines, "\n"))
	}
}
