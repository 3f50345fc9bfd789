// Package agent runs the coding agents of managed sessions: it prepares
// each session's working directory (exec-local: the task's repository or a
// per-task directory; exec-worktree: a git worktree on its own branch),
// runs the executor profile's scripts, launches the agent type's ACP
// command with an allow-listed environment, hands it the session's own
// Kandev MCP server and its prompts, records everything the agent reports
// in the task's conversation, answers or forwards its permission requests,
// and stops it (ACP cancel, SIGTERM, SIGKILL after a bound).
//
// Every call it makes derives from the base context it is built with; when
// that ends, every agent is stopped and its session left to resume. It
// emits kanban.TurnEvent domain events. It depends on the domain (kanban,
// whose events it publishes) and the action package's topics and waiters;
// the rest of the backend reaches it only through the action.Agents
// interface, so it must not be imported by action, flow, store, ws or mcp.
package agent
