package catalog

import (
	"maps"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// stepFields are a workflow step's settings, written once for
// create_workflow_step, update_workflow_step, create_workflow's steps and
// the import/export document. Each call returns fresh schemas.
func stepFields() P {
	return P{
		"name":   Str("Step (column) name, unique in the workflow.").Len(1, kanban.MaxNameLen),
		"color":  Str(`Display colour, e.g. "#3b82f6".`).Len(0, kanban.MaxNameLen),
		"prompt": Str("Instructions for agents on this step.").Len(0, kanban.MaxPromptLen),
		"is_start_step": Bool("New tasks land here; setting it moves the flag from another step (clear it by " +
			"marking another)."),
		"allow_manual_move": Bool("Tasks may be moved here by hand.").Default(true),
		"auto_advance":      Bool("Move a task on when its agent finishes: at step_complete_kandev or its turn's end.").Default(false),
		"wip_limit":         Int("Maximum tasks on the step; 0 is none.").Range(0, kanban.MaxWIPLimit),
		"auto_archive_after_hours": Int("Archive tasks after this many hours here; 0 never.").
			Range(0, kanban.MaxAutoArchiveHours),
		"auto_advance_requires_signal":  Bool("Turn-end moves need step_complete_kandev in that turn.").Default(false),
		"pull_from_step_id":             Str("When this step has room, pull the longest-waiting task of that step; \"\" clears it.").Pattern(`^[A-Za-z0-9_-]{0,64}$`),
		"cancel_triggers_turn_complete": Bool("A cancelled turn still runs on_turn_complete and auto-advance.").Default(false),
		"show_in_command_panel":         Bool("Display hint of the reference's command panel, stored only.").Default(false),
		"pull_from_step_position":       Int("pull_from_step_id as a 0-based position, where steps have no ids yet.").Range(0, kanban.MaxWorkflowSteps-1),
		"events":                        stepEvents(),
	}
}

// stepSpecs is a workflow's steps, as create_workflow_kandev and the
// workflow document list them.
func stepSpecs(desc string) S {
	return Arr(desc, Obj("One step's settings.", stepFields(), "name")).Items(1, kanban.MaxWorkflowSteps)
}

// stepEvents is the explicit record of step automations: keys are the
// event kinds (kanban.StepEventKinds), values lists of automations.
func stepEvents() S {
	return S{"type": "object",
		"description": "Automations run in order on on_enter/on_exit (a task arrives/leaves) and " +
			"on_turn_start/on_turn_complete (an agent turn starts/ends); replaces all stored ones.",
		"propertyNames":        S{"enum": kanban.StepEventKinds},
		"additionalProperties": Arr("In order.", stepAction()).Items(0, kanban.MaxStepActions),
	}
}

// stepAction is one automation: a branch per type of the engine's closed
// set (kanban.AutomationTypes) with its closed config, and one branch for
// all the types that take no settings (their type an enum).
func stepAction() S {
	var branches []S
	var bare, bareDesc []string
	for _, t := range kanban.AutomationTypes {
		if len(t.Params) == 0 {
			bare, bareDesc = append(bare, t.Name), append(bareDesc, t.Name+": "+t.Desc)
			continue
		}
		props, required := P{}, []string{}
		for _, p := range t.Params {
			props[p.Name] = automationParam(p)
			if p.Required {
				required = append(required, p.Name)
			}
		}
		cfg := Obj("Settings.", props, required...)
		if len(t.OneOf) > 0 {
			cfg.Props(1, 1)
		}
		reqs := []string{"type"}
		if len(required) > 0 || len(t.OneOf) > 0 {
			reqs = append(reqs, "config")
		}
		branches = append(branches, Obj("", P{"type": Const(t.Desc, t.Name), "config": cfg}, reqs...))
	}
	branches = append(branches, Obj("", P{
		"type":   Enum(strings.Join(bareDesc, " "), bare...),
		"config": Obj("No settings.", P{}),
	}, "type"))
	return OneOf("One automation: type and its config.", branches...)
}

// automationParam is the schema of one automation setting.
func automationParam(p kanban.AutomationParam) S {
	switch p.Kind {
	case kanban.ParamID:
		return ID(p.Desc)
	case kanban.ParamState:
		return Enum(p.Desc, taskStates...)
	case kanban.ParamIndex:
		return Int(p.Desc).Range(0, kanban.MaxWorkflowSteps-1)
	}
	return Str(p.Desc).Len(1, p.MaxLen)
}

// anyJSON is the explicit type list of an open record's values: every
// JSON type, declared rather than implied.
var anyJSON = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// openConfig is an open settings record: names matching
// kanban.SettingKeyPattern, any JSON values.
func openConfig(desc string) S {
	return Record(desc, kanban.SettingKeyPattern, S{"description": "A setting's value (any JSON).", "type": anyJSON})
}

// withStepFields returns the step settings plus extra properties.
func withStepFields(extra P) P {
	p := stepFields()
	maps.Copy(p, extra)
	return p
}

var stepOutList = out("The workflow's steps in their new board order.", P{
	"items": Arr("Every step of the workflow, in board order.", stepOut),
}, "items")

// stepConfigTools are the step tools of the config-workflows group.
var stepConfigTools = []*Tool{
	{
		Name:        "create_workflow_step_kandev",
		Action:      kanban.ActionWorkflowStepCreate,
		Title:       "Create workflow step",
		Description: "Add a step (board column) to a workflow, last or at position; a workflow's first step is its start step.",
		Input: Obj("", withStepFields(P{
			"workflow_id": ID("Workflow to add the step to."),
			"position":    Int("0-based position; default last.").Range(0, kanban.MaxWorkflowSteps-1),
		}), "workflow_id", "name"),
		Output: stepOut,
		Hints:  WriteHints,
	},
	{
		Name:        "update_workflow_step_kandev",
		Action:      kanban.ActionWorkflowStepUpdate,
		Title:       "Update workflow step",
		Description: "Change a workflow step's settings; only the fields you give change.",
		Input: Obj("", withStepFields(P{
			"step_id": ID("Step to change."),
		}), "step_id"),
		Output: stepOut,
		Hints:  IdempotentWrite,
	},
	{
		Name:        "delete_workflow_step_kandev",
		Action:      kanban.ActionWorkflowStepDelete,
		Title:       "Delete workflow step",
		Description: "Permanently delete a workflow step. Refused while any task (archived included) is on it; move them first.",
		Input: Obj("", P{
			"step_id": ID("Step to delete."),
		}, "step_id"),
		Output: deletionOut,
		Hints:  DestructiveHints,
	},
	{
		Name:        "reorder_workflow_steps_kandev",
		Action:      kanban.ActionWorkflowStepReorder,
		Title:       "Reorder workflow steps",
		Description: "Set the board order of a workflow's steps. step_ids must list every step of the workflow exactly once.",
		Input: Obj("", P{
			"workflow_id": ID("Workflow whose steps to reorder."),
			"step_ids": Arr("Every step id of the workflow, each once, in the new order.",
				ID("A step id.")).Items(1, kanban.MaxWorkflowSteps).Unique(),
		}, "workflow_id", "step_ids"),
		Output: stepOutList,
		Hints:  IdempotentWrite,
	},
}
