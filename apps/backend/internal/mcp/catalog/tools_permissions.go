package catalog

import (
	"maps"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var groupExternalPermissions = declare(&Group{Name: "external-permissions", Tools: []*Tool{
	{
		Name:    "list_pending_agent_permissions_kandev",
		Action:  kanban.ActionPermissionList,
		Drop:    []string{"workspace_id", "status"},
		Require: []string{"task_id"},
		Title:   "List pending agent permissions",
		Description: "List the permission requests a task's agents are waiting on (an agent asks before running a tool " +
			"call its profile does not auto-approve), oldest first, with the options each offers. Resolve one with " +
			"resolve_agent_permission_kandev, passing its ids unchanged.",
		Output: listOf(permissionOut),
		Hints:  ReadHints,
	},
	{
		Action: kanban.ActionPermissionResolve,
		Title:  "Resolve agent permission",
		Description: "Answer one pending permission request by choosing one of the options the agent offered (to deny, " +
			"choose its reject option). Pass the ids list_pending_agent_permissions_kandev returned, unchanged. The first " +
			"answer wins: a later one changes nothing and returns claimed=false with the stored request.",
		Output: out("The request after this call.", permissionFields(P{
			"claimed": Bool("True when this call's option was applied; false when the request was already answered, cancelled or expired."),
		}), "claimed", "request_id", "status"),
		Hints: IdempotentWrite,
	},
}})

var permissionOut = out("An agent's permission request.", permissionFields(P{}),
	"request_id", "pending_id", "session_id", "task_id", "title", "options", "status", "created_at")

// permissionFields adds the fields of a permission request to p.
func permissionFields(p P) P {
	maps.Copy(p, P{
		"request_id": Str("Kandev's id of the request."), "pending_id": Str("The agent's id of what it asks about."),
		"session_id": Str("The asking session."), "task_id": Str("Its task."), "workspace_id": Str("The task's workspace."),
		"title": Str("What the agent wants to do."), "kind": Str("The agent's kind of action (edit, execute, ...)."),
		"options": Arr("The options offered, in order.", out("One option.", P{
			"option_id": Str("Pass as option_id to choose it."), "name": Str("Its label."),
			"kind": Str("allow_once, allow_always, reject_once or reject_always."),
		}, "option_id", "name", "kind")),
		"status":      Str("pending, resolved, cancelled (the session stopped) or expired (nobody answered in time)."),
		"option_id":   Str("The chosen option, once resolved."),
		"resolved_by": Str("Who resolved it."),
		"created_at":  Str("When requested (RFC 3339)."),
		"resolved_at": Str("When it stopped being pending (RFC 3339)."),
	})
	return p
}
