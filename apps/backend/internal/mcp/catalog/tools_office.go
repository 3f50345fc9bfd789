package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupOfficeDocuments = declare(&Group{Name: "office-documents", Tools: []*Tool{
	{
		Action:      kanban.ActionDocumentList,
		Title:       "List task documents",
		Description: "List a task's documents by key (no content; get_task_document_kandev reads one).",
		Output:      listOf(documentOut),
		Hints:       ReadHints,
	},
	{
		Action:      kanban.ActionDocumentGet,
		Title:       "Get task document",
		Description: "Read a task document with its content and revision; NOT_FOUND if the key does not exist.",
		Output:      documentOut,
		Hints:       ReadHints,
	},
	{
		Action: kanban.ActionDocumentWrite,
		Title:  "Write task document",
		Description: "Create a task document under a key, or store its next revision (earlier ones are kept). Omitted type and " +
			"title keep the current ones.",
		Output: documentOut,
		Hints:  WriteHints,
	},
}})

var groupOfficeDecisions = declare(&Group{Name: "office-decisions", Tools: []*Tool{
	{
		Action: kanban.ActionStepDecide,
		Title:  "Record step decision",
		Description: "Approve or reject the work of a task's current step, with your reason; a later decision supersedes " +
			"your earlier ones. When you are one of the step's participants it counts toward its quorum: once reached, the " +
			"task moves on (approved: next step; rejected: back, with the reasons sent to its primary agent).",
		Output: out("The recorded decision.", P{
			"artifact":   artifactOut("The decision.", "step_id, decision and reason."),
			"supersedes": Str("Id of the earlier decision this one replaces, if any."),
			"quorum": out("What the decision did to the step's quorum.", P{
				"counted":    Bool("You are a participant of the task's step: the decision counts."),
				"outcome":    Str("approved or rejected once the quorum is reached."),
				"to_step_id": Str("Where the task moved then."),
			}, "counted"),
		}, "artifact", "quorum"),
		Hints: WriteHints,
	},
}})

var documentOut = out("A task document.", P{
	"task_id":    Str("The task."),
	"key":        Str("Document key."),
	"type":       Str("markdown, text, json or html."),
	"title":      Str("Title."),
	"content":    Str("Content (absent in lists)."),
	"revision":   Int("Revision number, 1 for the first."),
	"created_at": Str("When created (RFC 3339)."),
	"updated_at": Str("When the current revision was written (RFC 3339)."),
}, "task_id", "key", "type", "revision")
