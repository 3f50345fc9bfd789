// Package upstream connects a session's MCP server to the proxied MCP
// servers of its agent profile and turns their tools into tools Kandev can
// serve through its one wrapper: for each server it launches the command
// (stdio) or dials the URL (Streamable HTTP) with mcp-go's client
// transports, lists the tools, passes every input schema through the
// bounded estimate and the secure compiler, names the tools
// <server>__<tool>, keeps what it advertises within the server's byte
// budgets (per tool, and per server in name order), and forwards validated calls with a timeout, forwarded
// cancellation and a result byte budget. A crashed stdio server is
// restarted with backoff (calls fail fast meanwhile); a
// notifications/tools/list_changed re-lists and recompiles. What is
// refused, and why, is reported.
//
// It imports mcp-go's client, internal/mcp/toolserver (for the tool type it
// produces), argcheck, schemabudget, escape and the domain package; it must
// not import the store, the action registry or the WebSocket client.
package upstream
