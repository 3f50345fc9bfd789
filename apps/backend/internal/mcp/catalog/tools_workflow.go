package catalog

import (
	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var groupConfigWorkflows = declare(&Group{Name: "config-workflows", Tools: append([]*Tool{
	{
		Action:      kanban.ActionWorkflowCreate,
		Title:       "Create workflow",
		Description: "Create a workflow (kanban board) in a workspace, optionally with its steps, atomically.",
		Output:      workflowWithStepsOut,
		Hints:       WriteHints,
	},
	{
		Action:      kanban.ActionWorkflowUpdate,
		Title:       "Update workflow",
		Description: "Rename a workflow or change its description; only the fields you give change.",
		Output:      workflowOut,
		Hints:       IdempotentWrite,
	},
	{
		Action: kanban.ActionWorkflowDelete,
		Title:  "Delete workflow",
		Description: "Permanently delete a workflow and its steps; refused while tasks (archived included) are on it, " +
			"unless cascade.",
		Output: deletionOut,
		Hints:  DestructiveHints,
	},
	{
		Action: kanban.ActionWorkflowExport,
		Title:  "Export workflow",
		Description: "Export a workflow as a portable kandev_workflow document (the reference Kandev's format); its JSON " +
			"text is import_workflow_kandev's document.",
		Output: workflowDocumentOut,
		Hints:  ReadHints,
	},
	{
		Name:    "import_workflow_kandev",
		Action:  kanban.ActionWorkflowImport,
		Drop:    []string{"template_id", "name"},
		Require: []string{"document"},
		Title:   "Import workflow",
		Description: "Import the workflows of a kandev_workflow document (YAML or JSON, as export_workflow_kandev or the " +
			"reference Kandev writes it) into a workspace, skipping names it has. The whole document is checked first; a " +
			"rejected one creates nothing. Warnings name what could not be carried over.",
		Output: out("What the import did.", P{
			"created": Arr("Names of the workflows created, in document order.", Str("A workflow name.")),
			"skipped": Arr("Names skipped because the workspace already has a workflow of that name.", Str("A workflow name.")),
			"workflows": Arr("The created workflows with their steps.", out("A created workflow.", P{
				"workflow": workflowOut,
				"steps":    Arr("Its steps in board order.", stepOut),
			}, "workflow", "steps")),
			"warnings": Arr("Document fields (by path) Kandev could not honour.", Str("A warning.")),
		}, "created", "skipped", "workflows", "warnings"),
		Hints: WriteHints,
	},
}, stepConfigTools...)})

var (
	// workflowDocumentOut is light: import_workflow_kandev checks the
	// document field by field.
	workflowDocumentOut = out("The workflow document; its JSON text is import_workflow_kandev's document.", P{
		"version": Int("Document format version: 1."),
		"type":    Str(`Always "` + action.WorkflowDocType + `".`),
		"workflows": Arr("The exported workflow.", out("A workflow.", P{
			"name": Str("Name."), "description": Str("Description."), "prompt": Str("Prompt given to its agents first."),
			"agent_profile": S{"type": "object", "description": "Its agents' profile: agent_name, model."},
			"steps": Arr("The steps in board order.", S{"type": "object",
				"description": "One step: name, position, color, prompt, events (move_to_step by step_position), " +
					"is_start_step, show_in_command_panel, allow_manual_move, auto_archive_after_hours, heartbeat_minutes, agent_profile, " +
					"auto_advance_requires_signal, cancel_triggers_turn_complete, wip_limit, pull_from_step_position, " +
					"auto_advance."}),
		}, "name", "steps")),
	}, "version", "type", "workflows")
	workflowWithStepsOut = out("The created workflow and its steps.", P{
		"workflow": workflowOut,
		"steps":    Arr("The workflow's steps in board order.", stepOut),
	}, "workflow", "steps")
)
