package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupStepCompletion = declare(&Group{Name: "step-completion", Tools: []*Tool{
	{
		Action: kanban.ActionStepComplete,
		Title:  "Complete step",
		Description: "Signal that you finished the work of your task's current workflow step. The signal is recorded " +
			"with your summary; when the step is set to auto-advance the task moves to the next step (unless that step's " +
			"wip_limit is reached or this is the last step). The result says what happened.",
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
