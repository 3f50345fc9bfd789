// Package bench measures what Kandev's MCP path costs against its floors:
// argument validation against a bare cached schema, Streamable HTTP round
// trips against a raw mcp-go server, the session bridge against the direct
// endpoint, mode switches, a 100,000-task board and the tools/list size per
// mode. It writes bench/results.json and renders docs/public/performance.md
// from that file, so the published figures are the measured ones.
//
// Every figure is a median over repetitions, and every comparison is a
// ratio of figures measured in the same run (usually the median of ratios
// paired within each repetition). Targets are reported, never asserted.
//
// It is used only by cmd/kandev-bench; nothing in the product may import it.
package bench
