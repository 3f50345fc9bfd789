package catalog

import "maps"

// Output schemas describe structured results. They are open (servers may
// add fields in later versions; clients must ignore unknown ones) but
// declare every field agents rely on.

// out is an output object with required fields.
func out(desc string, props P, required ...string) S {
	o := S{"type": "object", "description": desc, "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// deletedOut is the output of a delete: the id and a deleted flag that is
// always true.
func deletedOut(desc, idDesc, deletedDesc string) S {
	return out(desc, P{"id": Str(idDesc), "deleted": Bool(deletedDesc)}, "id", "deleted")
}

// listOf is the output of a paginated list of item.
func listOf(item S) S {
	return out("One page of results.", P{
		"items":       Arr("The page's items.", item),
		"next_cursor": Str("Pass as cursor to get the next page; absent on the last page."),
	}, "items")
}

var (
	deletionOut  = deletedOut("The deleted entity.", "Id of the deleted entity.", "Always true: the entity is gone.")
	workspaceOut = out("A workspace.", P{
		"id": Str("Workspace id."), "name": Str("Name."), "description": Str("Description."),
	}, "id", "name")
	workflowOut = out("A workflow.", P{
		"id": Str("Workflow id."), "workspace_id": Str("Owning workspace."), "name": Str("Name."),
		"description": Str("Description."), "sort_order": Int("Display order."),
	}, "id", "workspace_id", "name")
	stepOut = out("A workflow step (board column).", P{
		"id": Str("Step id."), "workflow_id": Str("Owning workflow."), "name": Str("Name."),
		"position":          Int("0-based column order."),
		"is_start_step":     Bool("New tasks land here by default."),
		"allow_manual_move": Bool("Tasks may be moved here by hand."),
		"auto_advance":      Bool("step_complete_kandev moves tasks to the next step."),
		"wip_limit":         Int("Maximum tasks on the step; 0 is unlimited."),
		"prompt":            Str("Instructions for agents working on tasks in this step."),
		"events":            S{"type": "object", "description": "Automations keyed by event."},
	}, "id", "workflow_id", "name", "position")
	taskOut = out("A task.", P{
		"id": Str("Task id."), "workspace_id": Str("Workspace."), "workflow_id": Str("Workflow."),
		"workflow_step_id": Str("Current step."), "parent_id": Str("Parent task, if any."),
		"created_by_task_id": Str("The task whose agent session created it, if any: that task's sessions may change it."),
		"title":              Str("Title."), "description": Str("The task's prompt."),
		"state":       Str("Task state."),
		"position":    Int("0-based position within the step."),
		"external_id": Str("Caller's idempotency key, if set."),
		"archived_at": Str("When archived (RFC 3339); absent when active."),
		"created_at":  Str("Creation time (RFC 3339)."), "updated_at": Str("Last change (RFC 3339)."),
		"agent_profile_id":    Str("Agent profile kept for its agents; absent: its step's or workflow's, else the default."),
		"executor_profile_id": Str("Executor profile kept for its agents; absent: the default."),
	}, "id", "workspace_id", "workflow_id", "workflow_step_id", "title", "state")
	agentOut           = out("An agent type.", agentFields(P{}), "id", "name")
	executorProfileOut = out("An executor profile.", executorProfileFields(P{}), "id", "executor_id", "name")
)

// agentFields adds the fields of every agent output to p.
func agentFields(p P) P {
	maps.Copy(p, P{
		"id": Str("Agent id."), "name": Str("Agent name."), "display_name": Str("Display name."),
		"supports_mcp": Bool("Whether the agent can use MCP tools."),
	})
	return p
}

// executorProfileFields adds the fields of every executor profile output
// to p.
func executorProfileFields(p P) P {
	maps.Copy(p, P{
		"id": Str("Profile id."), "executor_id": Str("Executor."), "name": Str("Name."),
		"mcp_policy":   Str("How the executor treats MCP servers."),
		"is_default":   Bool("Used when no profile is named."),
		"workspace_id": Str("The workspace the profile belongs to; absent for a global profile."),
	})
	return p
}
