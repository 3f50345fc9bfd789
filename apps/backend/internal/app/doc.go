// Package app is the composition root: it opens the store, builds the
// action registry, mounts the WebSocket API, the external MCP endpoint and
// health checks, and runs the per-session MCP server (`kandev mcp`). It is
// the only package that wires adapters together.
package app
