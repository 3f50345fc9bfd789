package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupReview = declare(&Group{Name: "review", Tools: []*Tool{
	{
		Name:   "publish_review_findings_kandev",
		Action: kanban.ActionArtifactCreate,
		Title:  "Publish review findings",
		Description: "Publish the findings of a code review for the operator: each with a severity, a title, an " +
			"explanation and optionally a location and a suggested fix. Stored on your task; publish all findings of a " +
			"review in one call (an empty list says the review found nothing).",
		Input: Obj("", P{
			"task_id": artifactTaskRef("Task to attach the findings to"),
			"summary": Str("Overall verdict of the review, in markdown.").Len(1, kanban.MaxFindingSummary),
			"findings": Arr("The findings, most important first.", Obj("One finding.", P{
				"file":     Str("File path, relative to the repository root.").Len(1, kanban.MaxPathLen),
				"line":     Int("Line (1-based) the finding is about (its first line).").Range(1, kanban.MaxLineNumber),
				"line_end": Int("Last line (1-based, >= line) when the finding spans a range.").Range(1, kanban.MaxLineNumber),
				"repo":     Str("Repository name or id, when the task has several.").Len(1, kanban.MaxRepoRefLen),
				"severity": Enum("How much it matters: blocker (must fix), major, minor or nit.", kanban.FindingSeverities...),
				"category": Str(`Kind of issue, e.g. "correctness", "security", "style".`).Len(1, kanban.MaxFindingCategory),
				"title":    Str("One-line summary.").Len(1, kanban.MaxArtifactTitleLen),
				"body":     Str("Explanation, in markdown.").Len(1, kanban.MaxFindingTextLen),
				"suggestion": Str("Suggested fix (code or prose).").
					Len(1, kanban.MaxFindingTextLen),
			}, "severity", "title", "body")).Items(0, kanban.MaxFindings),
		}, "findings"),
		Output: artifactOut("The stored review findings.", "The review as given: summary and findings."),
		Hints:  WriteHints,
		Run:    createArtifact(kanban.ArtifactFindings),
	},
}})
