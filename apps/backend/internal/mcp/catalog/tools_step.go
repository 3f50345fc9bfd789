package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupStepCompletion = declare(&Group{Name: "step-completion", Tools: []*Tool{
	{
		Name:   "step_complete_kandev",
		Action: kanban.ActionStepComplete,
		Title:  "Complete step",
		Description: "Signal that you finished the work of your task's current workflow step. The signal is recorded " +
			"with your summary; when the step is set to auto-advance the task moves to the next step (unless that step's " +
			"wip_limit is reached or this is the last step). The result says what happened.",
		Input: Obj("", P{
			"summary": Str("What was done in this step.").Len(1, kanban.MaxStepSummaryLen),
			"handoff": Str("Notes for whoever works on the next step.").Len(1, kanban.MaxStepHandoffLen),
			"blockers": Str("Problems left open that others should know about (free text; omit when none).").
				Len(1, kanban.MaxStepBlockersLen),
		}, "summary"),
		Output: out("The recorded signal and the task's step afterwards.", P{
			"artifact":     artifactOut("The recorded signal.", "step_id, summary, handoff and blockers."),
			"task":         taskOut,
			"advanced":     Bool("True when the task moved to the next step."),
			"from_step_id": Str("The completed step."),
			"to_step_id":   Str("The step the task moved to (when advanced)."),
			"outcome":      Str("What happened, in words."),
		}, "artifact", "task", "advanced", "from_step_id", "outcome"),
		Hints: WriteHints,
	},
}})
