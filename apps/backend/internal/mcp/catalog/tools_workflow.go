package catalog

import (
	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var groupConfigWorkflows = declare(&Group{Name: "config-workflows", Tools: append([]*Tool{
	{
		Name:        "create_workflow_kandev",
		Action:      kanban.ActionWorkflowCreate,
		Title:       "Create workflow",
		Description: "Create a workflow (kanban board) in a workspace, optionally with its steps, atomically.",
		Input: Obj("", workflowFields(P{
			"workspace_id": ID("Workspace; default yours, else the first."),
			"steps":        stepSpecs("Steps in board order; the flagged start step, else the first, is the start step."),
		}), "name"),
		Output: workflowWithStepsOut,
		Hints:  WriteHints,
	},
	{
		Name:        "update_workflow_kandev",
		Action:      kanban.ActionWorkflowUpdate,
		Title:       "Update workflow",
		Description: "Rename a workflow or change its description; only the fields you give change.",
		Input: Obj("", P{
			"workflow_id": ID("Workflow to change."),
			"name":        Str("New name.").Len(1, kanban.MaxNameLen),
			"description": Str("New description.").Len(0, kanban.MaxDescriptionLen),
		}, "workflow_id"),
		Output: workflowOut,
		Hints:  IdempotentWrite,
	},
	{
		Name:   "delete_workflow_kandev",
		Action: kanban.ActionWorkflowDelete,
		Title:  "Delete workflow",
		Description: "Permanently delete a workflow and its steps; refused while tasks (archived included) are on it, " +
			"unless cascade.",
		Input: Obj("", P{
			"workflow_id": ID("Workflow to delete."),
			"cascade":     Bool("Also delete its tasks; else CONFLICT while it has any.").Default(false),
		}, "workflow_id"),
		Output: deletionOut,
		Hints:  DestructiveHints,
	},
	{
		Name:   "export_workflow_kandev",
		Action: kanban.ActionWorkflowExport,
		Title:  "Export workflow",
		Description: "Export a workflow as a portable kandev_workflow document (the reference Kandev's format); its JSON " +
			"text is import_workflow_kandev's document.",
		Input: Obj("", P{
			"workflow_id": ID("Workflow to export."),
		}, "workflow_id"),
		Output: workflowDocumentOut,
		Hints:  ReadHints,
	},
	{
		Name:   "list_workflow_templates_kandev",
		Action: kanban.ActionWorkflowTemplateList,
		Title:  "List workflow templates",
		Description: "List the built-in workflow templates (Kanban, Plan & Build, Feature Dev, ...) in gallery order: each " +
			"with what it does and its kandev_workflow document (steps, prompts, automations). Create one with " +
			"import_workflow_kandev and its template_id.",
		Input:  Obj("", PageProps(P{})),
		Output: listOf(out("A built-in template.", P{
			"id":          Str("Its template_id."),
			"name":        Str("The name of the workflow it creates."),
			"description": Str("What the workflow does."),
			"document":    workflowDocumentOut,
		}, "id", "name", "description", "document")),
		Hints: ReadHints,
	},
	{
		Name:   "import_workflow_kandev",
		Action: kanban.ActionWorkflowImport,
		Title:  "Import workflow",
		Description: "Import the workflows of a kandev_workflow document (YAML or JSON, as export_workflow_kandev or the " +
			"reference Kandev writes it), or a built-in template's (template_id, from list_workflow_templates_kandev), into " +
			"a workspace, skipping names it has. The whole document is checked first; a rejected one creates nothing. " +
			"Warnings name what could not be carried over.",
		Input: Obj("", P{
			"workspace_id": ID("Workspace; default yours, else the first."),
			"document": Str(`The document: {"version":1,"type":"kandev_workflow","workflows":[...]} as JSON or YAML; `+
				`give it or template_id.`).Len(1, kanban.MaxWorkflowDocBytes),
			"template_id": Enum("A built-in template to create instead of a document.", action.TemplateIDs...),
			"name":        Str("Name of the created workflow, for a template or a one-workflow document; default its own.").Len(1, kanban.MaxNameLen),
		}),
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

// workflowFields adds a workflow's own settings, as create_workflow_kandev
// and the workflow document take them, to p.
func workflowFields(p P) P {
	p["name"] = Str("Workflow name.").Len(1, kanban.MaxNameLen)
	p["description"] = Str("What the workflow is for.").Len(0, kanban.MaxDescriptionLen)
	return p
}

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
					"is_start_step, show_in_command_panel, allow_manual_move, auto_archive_after_hours, agent_profile, " +
					"auto_advance_requires_signal, cancel_triggers_turn_complete, wip_limit, pull_from_step_position, " +
					"auto_advance."}),
		}, "name", "steps")),
	}, "version", "type", "workflows")
	workflowWithStepsOut = out("The created workflow and its steps.", P{
		"workflow": workflowOut,
		"steps":    Arr("The workflow's steps in board order.", stepOut),
	}, "workflow", "steps")
)
