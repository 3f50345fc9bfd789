// Package action is the one registry of dotted `noun.verb` actions shared by
// every transport (WebSocket, MCP tool handlers, CLI). Each action declares
// its payload type (checked first by its contract: a tool's compiled input
// schema or a declared payload schema, set by the backend), the principals
// allowed to call it and its handler; business rules live here and in the store, never in a
// transport. It imports kanban and the standard library only.
package action
