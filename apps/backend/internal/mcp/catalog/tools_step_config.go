package catalog

import (
	"maps"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// stepFields are a workflow step's settings, written once for
// create_workflow_step, update_workflow_step, create_workflow's steps and
// the import/export document. Each call returns fresh schemas.
func stepFields() P {
	return P{
		"name":   Str("Step (board column) name, unique within the workflow.").Len(1, kanban.MaxNameLen),
		"color":  Str(`Display colour, e.g. "#3b82f6".`).Len(0, kanban.MaxNameLen),
		"prompt": Str("Instructions for agents working on tasks in this step.").Len(0, kanban.MaxPromptLen),
		"is_start_step": Bool("New tasks land on this step by default. Setting it takes the flag from the " +
			"workflow's other steps; it cannot be cleared on the start step (mark another step instead)."),
		"allow_manual_move": Bool("Tasks may be moved onto this step by hand. Default true.").Default(true),
		"auto_advance": Bool("Move a task to the next step when its agent finishes the step: at step_complete_kandev, or " +
			"at the end of its turn (see auto_advance_requires_signal). Default false.").Default(false),
		"wip_limit": Int("Maximum tasks on the step; 0 (default) means no limit.").Range(0, kanban.MaxWIPLimit),
		"auto_archive_after_hours": Int("Archive tasks that stay on the step this many hours; 0 (default) never.").
			Range(0, kanban.MaxAutoArchiveHours),
		"auto_advance_requires_signal": Bool("Turn-end transitions (auto_advance, on_turn_complete moves) happen only after " +
			"the agent called step_complete_kandev in that turn. Default false.").Default(false),
		"pull_from_step_id": Str("When this step has room, pull in the task that has waited longest on that step (of the " +
			"same workflow). Empty string clears it.").Pattern(`^[A-Za-z0-9_-]{0,64}$`),
		"cancel_triggers_turn_complete": Bool("An interrupted or stopped agent turn still runs on_turn_complete and " +
			"auto-advance. Default false.").Default(false),
		"show_in_command_panel": Bool("Display hint kept for the reference product's command panel; Kandev stores and " +
			"returns it. Default false.").Default(false),
		"pull_from_step_position": Int("pull_from_step_id given as that step's 0-based position, where steps have no "+
			"ids yet (create_workflow_kandev's steps, workflow documents).").Range(0, kanban.MaxWorkflowSteps-1),
		"events": stepEvents(),
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
		"description": "Automations by event, each list run in order by the workflow engine: on_enter/on_exit (a task " +
			"arrives on/leaves the step), on_turn_start/on_turn_complete (an agent turn on a task on the step " +
			"starts/ends). On update, replaces all stored automations ({} clears them).",
		"propertyNames":        S{"enum": kanban.StepEventKinds},
		"additionalProperties": Arr("Automations run on this event, in order.", stepAction()).Items(0, kanban.MaxStepActions),
	}
}

// stepAction is one automation: one branch per type of the engine's
// closed set (kanban.AutomationTypes), each with its closed config.
func stepAction() S {
	branches := make([]S, len(kanban.AutomationTypes))
	for i, t := range kanban.AutomationTypes {
		props, required := P{}, []string{}
		for _, p := range t.Params {
			props[p.Name] = automationParam(p)
			if p.Required {
				required = append(required, p.Name)
			}
		}
		branch := P{"type": Const(t.Desc, t.Name)}
		if len(props) > 0 {
			cfg := Obj("Settings of "+t.Name+".", props, required...)
			if len(t.OneOf) > 0 {
				cfg["minProperties"], cfg["maxProperties"] = 1, 1
			}
			branch["config"] = cfg
		} else {
			branch["config"] = Obj("No settings.", P{})
		}
		reqs := []string{"type"}
		if len(required) > 0 || len(t.OneOf) > 0 {
			reqs = append(reqs, "config")
		}
		branches[i] = Obj("", branch, reqs...)
	}
	return OneOf("One automation: its type and that type's settings.", branches...)
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
// kanban.SettingKeyPattern, any JSON values, at most maxKeys entries.
func openConfig(desc string, maxKeys int) S {
	r := Record(desc, kanban.SettingKeyPattern, S{"description": "A setting's value (any JSON).", "type": anyJSON})
	r["maxProperties"] = maxKeys
	return r
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
		Name:   "create_workflow_step_kandev",
		Action: kanban.ActionWorkflowStepCreate,
		Title:  "Create workflow step",
		Description: "Add a step (board column) to a workflow, last or at position. The workflow's first step becomes its start step. " +
			"Use update_workflow_step_kandev to change a step and reorder_workflow_steps_kandev to move it.",
		Input: Obj("", withStepFields(P{
			"workflow_id": ID("Workflow to add the step to."),
			"position":    Int("0-based position of the new step; later steps shift right. Default: last.").Range(0, kanban.MaxWorkflowSteps-1),
		}), "workflow_id", "name"),
		Output: stepOut,
		Hints:  WriteHints,
	},
	{
		Name:        "update_workflow_step_kandev",
		Action:      kanban.ActionWorkflowStepUpdate,
		Title:       "Update workflow step",
		Description: "Change a workflow step's settings; only the fields you give change (events, when given, replaces all automations).",
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
