package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupRichOutput = declare(&Group{Name: "rich-output", Tools: []*Tool{
	{
		Name:   "show_rich_output_kandev",
		Action: kanban.ActionArtifactCreate,
		Title:  "Show rich output",
		Description: "Show the operator a compact presentation next to your conversation: blocks of file previews, line or " +
			"bar charts, or metrics. Give semantic data; Kandev draws it. Paths are relative to your task's workspace and " +
			"read when you call (a preview keeps 64 KiB; a CSV a header row and 100 data rows). A chart has labels and " +
			"series, or csv. Stored on your task.",
		Input: artifactInput(kanban.ArtifactRichOutput, "task_id"),
		Output: artifactOut("The stored rich output.", "The output as stored: version, title, description and blocks, "+
			"with each file block's content (or binary=true), size and truncated, and each CSV chart's labels and series."),
		Hints: WriteHints,
		Run:   createArtifact(kanban.ArtifactRichOutput),
	},
}})
