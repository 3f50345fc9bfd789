// Package toolserver serves the catalog's tools with mcp-go: it compiles every
// tool's validator once, builds a profile's tool set from prebuilt (tool,
// validator, handler) entries, wraps every handler in the one validating
// wrapper, swaps tool sets on mode switches, and mounts the transports
// behind the strict JSON gate. It must not import the store or the action
// registry: it reaches the backend only through catalog.Backend.
package toolserver
