// Package reliability runs Kandev's reliability scenarios against the real
// `kandev serve` binary and its real clients: a mixed load over /mcp, the
// WebSocket API and `kandev mcp` bridges; kill -9 during a write storm;
// a restart under load with bridges attached and mock agents running; a
// data dir on a small filesystem that fills up; MCP sessions that are
// never closed; slow, idle and half-open clients; agents that flood,
// hang or ignore SIGTERM. Each scenario checks its invariants from the
// database and from the client side (never from logs) and returns counts.
//
// The tests in this package run every scenario at CI scale (a few minutes
// on 2 cores, part of `make test`); cmd/kandev-reliability runs them at
// full scale, writes reliability/results.json and renders
// docs/public/reliability.md from that file (`make reliability`).
//
// Traffic goes to loopback only. Every child process it starts is stopped
// by its own handle. Nothing in the product may import this package.
package reliability
