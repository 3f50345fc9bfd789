package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// Document rules (as the store enforces).
const (
	documentKeyPattern = `^[a-z0-9][a-z0-9._-]{0,63}$`
	maxDecisionReason  = 2000
)

// docTaskRef is the task_id of the document tools.
func docTaskRef(reach string) S {
	return SelfTaskRef(`Task the document belongs to: your own task (default "self")` + reach)
}

var _ = declare(&Group{Name: "office-documents", Tools: []*Tool{
	{
		Name:   "list_task_documents_kandev",
		Action: kanban.ActionDocumentList,
		Title:  "List task documents",
		Description: "List the documents kept on a task (key, type, title, revision; no content), ordered by key. Use " +
			"get_task_document_kandev to read one.",
		Input: Obj("", PageProps(P{
			"task_id": docTaskRef(", one of its ancestors or one of its descendants."),
		})),
		Output: listOf(documentOut),
		Hints:  ReadHints,
	},
	{
		Name:        "get_task_document_kandev",
		Action:      kanban.ActionDocumentGet,
		Title:       "Get task document",
		Description: "Read one document of a task, with its content and current revision. NOT_FOUND when the key does not exist.",
		Input: Obj("", P{
			"task_id":      docTaskRef(", one of its ancestors or one of its descendants."),
			"document_key": Str("The document's key.").Pattern(documentKeyPattern),
		}, "document_key"),
		Output: documentOut,
		Hints:  ReadHints,
	},
	{
		Name:   "write_task_document_kandev",
		Action: kanban.ActionDocumentWrite,
		Title:  "Write task document",
		Description: "Create a task document under a key, or store a new revision of it (earlier revisions are kept). " +
			"You may write to your own task or one of its ancestors only. Omitted type and title keep the current ones " +
			"(a new document defaults to markdown).",
		Input: Obj("", P{
			"task_id":      docTaskRef(" or one of its ancestors."),
			"document_key": Str(`Document key: lowercase letters, digits, ".", "_" and "-", starting with a letter or digit, at most 64 characters.`).Pattern(documentKeyPattern),
			"type":         Enum("Content type. Default: markdown for a new document, else unchanged.", kanban.DocumentTypes...),
			"title":        Str("Document title.").Len(1, maxPlanTitle),
			"content":      Str("The whole document content.").Len(0, kanban.MaxContentLen),
		}, "document_key", "content"),
		Output: documentOut,
		Hints:  WriteHints,
	},
}})

var _ = declare(&Group{Name: "office-decisions", Tools: []*Tool{
	{
		Name:   "record_step_decision_kandev",
		Action: kanban.ActionStepDecide,
		Title:  "Record step decision",
		Description: "Approve or reject the work of a task's current workflow step, with your reason. A later decision " +
			"on the same task supersedes earlier ones (the result names the one it replaced).",
		Input: Obj("", P{
			"task_id":  SelfTaskRef(`Task decided on: your own task (default "self") or one of its subtasks.`),
			"decision": Enum("approved or rejected.", "approved", "rejected"),
			"reason":   Str("Why, in a few sentences.").Len(1, maxDecisionReason),
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
