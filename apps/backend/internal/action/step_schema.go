package action

import (
	"maps"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// stepFields are a workflow step's settings, written once for
// workflow.step.create, workflow.step.update and workflow.create's steps.
// Each call returns fresh schemas.
func stepFields() schema.P {
	return schema.P{
		"name":   schema.Str("Step (column) name, unique in the workflow.").Len(1, kanban.MaxNameLen),
		"color":  schema.Str(`Display colour, e.g. "#3b82f6".`).Len(0, kanban.MaxNameLen),
		"prompt": schema.Str("Instructions for agents on this step.").Len(0, kanban.MaxPromptLen),
		"is_start_step": schema.Bool("New tasks land here; setting it moves the flag from another step (clear it by " +
			"marking another)."),
		"allow_manual_move": schema.Bool("Tasks may be moved here by hand.").Default(true),
		"auto_advance":      schema.Bool("Move a task on when its agent finishes: at step_complete_kandev or its turn's end.").Default(false),
		"wip_limit":         schema.Int("Maximum tasks on the step; 0 is none.").Range(0, kanban.MaxWIPLimit),
		"auto_archive_after_hours": schema.Int("Archive tasks after this many hours here; 0 never.").
			Range(0, kanban.MaxAutoArchiveHours),
		"heartbeat_minutes": schema.Int("Fire on_heartbeat for each task here every this many minutes it stays; 0 never.").
			Range(0, kanban.MaxHeartbeatMinutes),
		"auto_advance_requires_signal":  schema.Bool("Turn-end moves need step_complete_kandev in that turn.").Default(false),
		"pull_from_step_id":             schema.Str("When this step has room, pull the longest-waiting task of that step; \"\" clears it.").Pattern(`^[A-Za-z0-9_-]{0,64}$`),
		"cancel_triggers_turn_complete": schema.Bool("A cancelled turn still runs on_turn_complete and auto-advance.").Default(false),
		"show_in_command_panel":         schema.Bool("List the step in the board's command panel (Ctrl/Cmd+K) as a quick action: move the open task there, or create a task in it.").Default(false),
		"pull_from_step_position":       schema.Int("pull_from_step_id as a 0-based position, where steps have no ids yet.").Range(0, kanban.MaxWorkflowSteps-1),
		"events":                        stepEvents(),
		"approval":                      approvalProp(),
	}
}

// approvalProp is a step's participants and quorum (kanban.StepApproval).
func approvalProp() schema.S {
	participant := schema.Obj("One participant: an agent profile, or the operator.", schema.P{
		"role":             schema.Enum("What the participant does on the step.", kanban.ParticipantRoles...),
		"agent_profile_id": idProp("The participant's agent profile (woken by queue_run_for_each_participant)."),
		"operator":         schema.Bool("The operator decides (on the board, or step.decide over the WebSocket API)."),
		"instructions":     schema.Str("Role instructions told to the agent with every wake.").Len(1, kanban.MaxParticipantInstructionsLen),
	}, "role")
	return schema.Obj("Office: the step's reviewers or approvers and the quorum of their record_step_decision_kandev decisions "+
		"that moves a task on: approved, to the next step; rejected, to reject_step_id (default the previous step) with the "+
		"reasons sent to the task's primary agent; on_approval_resolved runs then.", schema.P{
		"participants":   schema.Arr("Each an agent profile or the operator, at most once.", participant).Items(1, kanban.MaxStepParticipants),
		"quorum":         schema.Enum("all: every participant approves (one rejection rejects); any: one approval approves; count: count approvals approve.", kanban.QuorumRules...),
		"count":          schema.Int("N of N-of-M, for quorum count.").Range(1, kanban.MaxStepParticipants),
		"reject_step_id": idProp("Where a rejected task goes; default the previous step."),
		"reject_step_position": schema.Int("reject_step_id as a 0-based position, where steps have no ids yet.").
			Range(0, kanban.MaxWorkflowSteps-1),
	}, "participants", "quorum")
}

// withStepFields returns the step settings plus extra properties.
func withStepFields(extra schema.P) schema.P {
	p := stepFields()
	maps.Copy(p, extra)
	return p
}

// stepSpecs is a workflow's steps, as workflow.create lists them.
func stepSpecs(desc string) schema.S {
	return schema.Arr(desc, schema.Obj("One step's settings.", stepFields(), "name")).Items(1, kanban.MaxWorkflowSteps)
}

// workflowFields adds a workflow's own settings, as workflow.create takes
// them, to p.
func workflowFields(p schema.P) schema.P {
	p["name"] = schema.Str("Workflow name.").Len(1, kanban.MaxNameLen)
	p["description"] = schema.Str("What the workflow is for.").Len(0, kanban.MaxDescriptionLen)
	return p
}

// stepEvents is the explicit record of step automations: keys are the
// event kinds (kanban.StepEventKinds), values lists of automations.
func stepEvents() schema.S {
	return schema.S{"type": "object",
		"description":          "Automations run in order on the step's events (" + eventsDesc() + "); replaces all stored ones.",
		"propertyNames":        schema.S{"enum": kanban.StepEventKinds},
		"additionalProperties": schema.Arr("In order.", stepAutomation()).Items(0, kanban.MaxStepActions),
	}
}

// eventsDesc words every step event briefly, from kanban.StepEvents.
func eventsDesc() string {
	parts := make([]string, len(kanban.StepEvents))
	for i, e := range kanban.StepEvents {
		parts[i] = e.Name
	}
	return strings.Join(parts, ", ") + "; see the workflow automation docs for when each fires"
}

// stepAutomation is one automation: a branch per type of the engine's
// closed set (kanban.AutomationTypes) with its closed config, and one
// branch for all the types that take no settings (their type an enum).
func stepAutomation() schema.S {
	var branches []schema.S
	var bare, bareDesc []string
	for _, t := range kanban.AutomationTypes {
		if len(t.Params) == 0 {
			bare, bareDesc = append(bare, t.Name), append(bareDesc, t.Name+": "+t.Desc)
			continue
		}
		props, required := schema.P{}, []string{}
		for _, p := range t.Params {
			props[p.Name] = automationParam(p)
			if p.Required {
				required = append(required, p.Name)
			}
		}
		cfg := schema.Obj("Settings.", props, required...)
		if len(t.OneOf) > 0 {
			cfg.Props(1, 1)
		}
		reqs := []string{"type"}
		if len(required) > 0 || len(t.OneOf) > 0 {
			reqs = append(reqs, "config")
		}
		branches = append(branches, schema.Obj("", schema.P{"type": schema.Const(t.Desc, t.Name), "config": cfg}, reqs...))
	}
	branches = append(branches, schema.Obj("", schema.P{
		"type":   schema.Enum(strings.Join(bareDesc, " "), bare...),
		"config": schema.Obj("No settings.", schema.P{}),
	}, "type"))
	return schema.OneOf("One automation: type and its config.", branches...)
}

// automationParam is the schema of one automation setting.
func automationParam(p kanban.AutomationParam) schema.S {
	switch p.Kind {
	case kanban.ParamID:
		return idProp(p.Desc)
	case kanban.ParamState:
		return schema.Enum(p.Desc, taskStates...)
	case kanban.ParamIndex:
		return schema.Int(p.Desc).Range(0, kanban.MaxWorkflowSteps-1)
	case kanban.ParamEnum:
		return schema.Enum(p.Desc, p.Values...)
	}
	return schema.Str(p.Desc).Len(1, p.MaxLen)
}
