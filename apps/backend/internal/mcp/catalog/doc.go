// Package catalog declares every MCP tool exactly once, each from the
// backend action it serves (package action owns the action's contract):
// the tool's title, description, output schema, annotations and mode group
// are written here; its input schema and aliases are its action's
// contract — served unchanged (the tool then takes its name from the
// contract, so WebSocket and MCP callers are refused alike), narrowed
// (Drop, Require: schema.Narrow) or adapted by a Run of its own — so a tool
// cannot drift from its action. A forwarding tool's checked arguments go
// to the action as action.Checked (not checked twice in process). The
// package also holds the one table that maps a profile (mode +
// capabilities) to tool groups. It must not import mcp-go's server, the
// store or the WebSocket package: handlers reach the backend only through
// the Backend interface.
package catalog
