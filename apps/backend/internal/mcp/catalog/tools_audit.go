package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// groupAudit reads the audit log: the external endpoint only (it acts as
// the operator, the one principal audit.list admits).
var groupAudit = declare(&Group{Name: "audit", Tools: []*Tool{
	{
		Action: kanban.ActionAuditList,
		Title:  "List audit log entries",
		Description: "List who changed what, newest first: one entry per state-changing action (actor, action, target ids, " +
			"a redacted summary, transport, time). Filter by actor, action, target id and time range; page with cursor.",
		Output: listOf(auditOut),
		Hints:  ReadHints,
	},
}})

var auditOut = out("An audit entry.", P{
	"id": Str("Entry id."), "actor": Str(`Who: "operator" or "session:<session id>".`), "actor_kind": Str("operator or session."),
	"session_id": Str("The session's id, for a session actor."), "task_id": Str("The session's bound task, for a session actor."),
	"action": Str("The action, e.g. task.move."), "targets": Arr("Entity ids the call named, and what it created.", Str("An id.")),
	"summary": Str("The payload, redacted and bounded: bodies and secrets as their length only."),
	"via":     Str("Transport: ws, board, mcp or internal."), "from": Str("Remote address, when known."),
	"at": Str("When (RFC 3339, UTC)."),
}, "id", "actor", "actor_kind", "action", "targets", "summary", "via", "at")
