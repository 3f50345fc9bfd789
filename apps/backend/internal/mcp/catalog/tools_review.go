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
		Input:  artifactInput(kanban.ArtifactFindings),
		Output: artifactOut("The stored review findings.", "The review as given: summary and findings."),
		Hints:  WriteHints,
		Run:    createArtifact(kanban.ArtifactFindings),
	},
}})
