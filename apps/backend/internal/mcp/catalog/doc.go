// Package catalog declares every MCP tool exactly once (name, title,
// description, input and output schemas, annotations, normalisation and a
// thin handler that calls backend actions) and the one table that maps a
// profile (mode + capabilities) to tool groups. It must not import mcp-go's
// server, the store or the WebSocket package: handlers reach the backend
// only through the Backend interface.
package catalog
