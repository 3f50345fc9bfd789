package catalog

import (
	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var _ = declare(&Group{Name: "config-workflows", Tools: append([]*Tool{
	{
		Name:   "create_workflow_kandev",
		Action: "workflow.create",
		Title:  "Create workflow",
		Description: "Create a workflow (kanban board) in a workspace, optionally with its steps in the same atomic call. " +
			"To copy a workflow, use export_workflow_kandev and import_workflow_kandev instead.",
		Input: Obj("", workflowFields(P{
			"workspace_id": ID("Workspace for the workflow. Default: your workspace, else the first workspace."),
			"steps": stepSpecs("Steps to create, in board order; names unique. The flagged start step, else the " +
				"first, is the start step."),
		}), "name"),
		Output: workflowWithStepsOut,
		Hints:  WriteHints,
	},
	{
		Name:        "update_workflow_kandev",
		Action:      "workflow.update",
		Title:       "Update workflow",
		Description: "Rename a workflow or change its description; only the fields you give change.",
		Input: Obj("", P{
			"workflow_id": ID("Workflow to change."),
			"name":        Str("New name.").Len(1, kanban.MaxNameLen),
			"description": Str("New description.").Len(0, kanban.MaxDescriptionLen),
		}, "workflow_id"),
		Output: workflowOut,
		Hints:  IdempotentWrite,
		Run:    forwardID("workflow_id"),
	},
	{
		Name:   "delete_workflow_kandev",
		Action: "workflow.delete",
		Title:  "Delete workflow",
		Description: "Permanently delete a workflow and its steps. Refused while tasks (archived included) are on it, " +
			"unless cascade is true, which also deletes those tasks and their sessions, plans and documents.",
		Input: Obj("", P{
			"workflow_id": ID("Workflow to delete."),
			"cascade": Bool("Also delete every task on the workflow. Default false: the delete is refused " +
				"(CONFLICT) while the workflow has tasks.").Default(false),
		}, "workflow_id"),
		Output: deletionOut,
		Hints:  DestructiveHints,
		Run:    forwardID("workflow_id"),
	},
	{
		Name:   "export_workflow_kandev",
		Action: "workflow.export",
		Title:  "Export workflow",
		Description: "Export a workflow and its steps' settings as a versioned, portable document " +
			`({"format":"kandev_workflow","version":1,...}, no ids) to pass to import_workflow_kandev.`,
		Input: Obj("", P{
			"workflow_id": ID("Workflow to export."),
		}, "workflow_id"),
		Output: workflowDocumentOut,
		Hints:  ReadHints,
		Run:    forwardID("workflow_id"),
	},
	{
		Name:   "import_workflow_kandev",
		Action: "workflow.import",
		Title:  "Import workflow",
		Description: "Create a new workflow with its steps from a document made by export_workflow_kandev, atomically. " +
			"The document must match its schema and be at most 1 MiB; a rejected document creates nothing.",
		Input: Obj("", P{
			"workspace_id": ID("Workspace to create the workflow in. Default: your workspace, else the first workspace."),
			"document":     workflowDocument(`A workflow document: {"format":"kandev_workflow","version":1,"workflow":{...},"steps":[...]}.`),
		}, "document"),
		Output: workflowWithStepsOut,
		Hints:  WriteHints,
	},
}, stepConfigTools...)})

// workflowDocument is the schema of the portable workflow document, as
// import_workflow_kandev takes it and export_workflow_kandev returns it.
func workflowDocument(desc string) S {
	return Obj(desc, P{
		"format": Const(`Document format: "`+action.WorkflowDocFormat+`".`, action.WorkflowDocFormat),
		"version": S{"type": "integer", "const": action.WorkflowDocVersion,
			"description": "Document format version: 1."},
		"workflow": Obj("The workflow's own settings.", workflowFields(P{}), "name"),
		"steps":    stepSpecs("The steps in board order; names unique, at most one start step (default: the first)."),
	}, "format", "version", "workflow", "steps")
}

// workflowFields adds a workflow's own settings, as create_workflow_kandev
// and the workflow document take them, to p.
func workflowFields(p P) P {
	p["name"] = Str("Workflow name.").Len(1, kanban.MaxNameLen)
	p["description"] = Str("What the workflow is for.").Len(0, kanban.MaxDescriptionLen)
	return p
}

var (
	// workflowDocumentOut is light: the document matches import's schema.
	workflowDocumentOut = out("The workflow document; pass it unchanged as import_workflow_kandev's document.", P{
		"format":   Str(`Always "` + action.WorkflowDocFormat + `".`),
		"version":  Int("Document format version."),
		"workflow": out("The workflow's name and description.", P{"name": Str("Name."), "description": Str("Description.")}, "name"),
		"steps": Arr("The steps in board order.", S{"type": "object",
			"description": "One step's settings: the fields of create_workflow_step_kandev without workflow_id."}),
	}, "format", "version", "workflow", "steps")
	workflowWithStepsOut = out("The created workflow and its steps.", P{
		"workflow": workflowOut,
		"steps":    Arr("The workflow's steps in board order.", stepOut),
	}, "workflow", "steps")
)
