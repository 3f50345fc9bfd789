package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// docTaskRef is the task_id of the document tools.
func docTaskRef(reach string) S {
	return SelfTaskRef(`Task of the document: yours ("self", default)` + reach)
}

var groupOfficeDocuments = declare(&Group{Name: "office-documents", Tools: []*Tool{
	{
		Name:        "list_task_documents_kandev",
		Action:      kanban.ActionDocumentList,
		Title:       "List task documents",
		Description: "List a task's documents by key (no content; get_task_document_kandev reads one).",
		Input: Obj("", PageProps(P{
			"task_id": docTaskRef(", an ancestor or a descendant."),
		})),
		Output: listOf(documentOut),
		Hints:  ReadHints,
	},
	{
		Name:        "get_task_document_kandev",
		Action:      kanban.ActionDocumentGet,
		Title:       "Get task document",
		Description: "Read a task document with its content and revision; NOT_FOUND if the key does not exist.",
		Input: Obj("", P{
			"task_id":      docTaskRef(", an ancestor or a descendant."),
			"document_key": Str("The document's key.").Pattern(kanban.DocumentKeyPattern),
		}, "document_key"),
		Output: documentOut,
		Hints:  ReadHints,
	},
	{
		Name:   "write_task_document_kandev",
		Action: kanban.ActionDocumentWrite,
		Title:  "Write task document",
		Description: "Create a task document under a key, or store its next revision (earlier ones are kept). Omitted type and " +
			"title keep the current ones.",
		Input: Obj("", P{
			"task_id":      docTaskRef(" or an ancestor."),
			"document_key": Str("Document key.").Pattern(kanban.DocumentKeyPattern),
			"type":         Enum("Content type; a new document defaults to markdown.", kanban.DocumentTypes...),
			"title":        Str("Document title.").Len(1, kanban.MaxPlanTitleLen),
			"content":      Str("The whole document content.").Len(0, kanban.MaxContentLen),
		}, "document_key", "content"),
		Output: documentOut,
		Hints:  WriteHints,
	},
}})

var groupOfficeDecisions = declare(&Group{Name: "office-decisions", Tools: []*Tool{
	{
		Name:   "record_step_decision_kandev",
		Action: kanban.ActionStepDecide,
		Title:  "Record step decision",
		Description: "Approve or reject the work of a task's current step, with your reason; a later decision supersedes " +
			"earlier ones.",
		Input: Obj("", P{
			"task_id":  SelfTaskRef(`Task decided on: yours ("self", default) or a subtask.`),
			"decision": Enum("The decision.", kanban.Decisions...),
			"reason":   Str("Why, in a few sentences.").Len(1, kanban.MaxDecisionReasonLen),
		}, "decision", "reason"),
		Output: out("The recorded decision.", P{
			"artifact":   artifactOut("The decision.", "step_id, decision and reason."),
			"supersedes": Str("Id of the earlier decision this one replaces, if any."),
		}, "artifact"),
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
