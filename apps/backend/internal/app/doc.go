// Package app is the composition root and the command line. Main parses a
// command's flags into its configuration and runs it: Run serves the
// backend, RunMCP a session's MCP server (`kandev mcp`), the rest are
// operator commands. Run listens first, then builds every part in
// dependency order on one lifetime (lifetime.go): its base context is the
// parts' (the runtime's, the workflow engine's, every request's), and its
// cleanup stack stops them in reverse. It is the only package that wires
// adapters together; nothing imports it but cmd/kandev.
package app
