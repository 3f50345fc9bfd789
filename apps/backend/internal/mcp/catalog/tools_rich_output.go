package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// workspacePath is a path relative to the task's workspace.
func workspacePath(desc string) S { return Str(desc).Len(1, kanban.MaxRichPathLen) }

var groupRichOutput = declare(&Group{Name: "rich-output", Tools: []*Tool{
	{
		Name:   "show_rich_output_kandev",
		Action: kanban.ActionArtifactCreate,
		Title:  "Show rich output",
		Description: "Show the operator a compact presentation next to your conversation: blocks of file previews, line or " +
			"bar charts, or metrics. Give semantic data; Kandev draws it. Paths are relative to your task's workspace and " +
			"read when you call (a preview keeps 64 KiB; a CSV a header row and 100 data rows). A chart has labels and " +
			"series, or csv. Stored on your task.",
		Input: Obj("", P{
			"version":     S{"type": "integer", "const": 1, "description": "Format version; always 1."},
			"title":       Str("Plain-text title of the presentation.").Len(1, kanban.MaxRichTitleLen),
			"description": Str("Plain-text context for the whole presentation.").Len(0, kanban.MaxRichTextLen),
			"blocks": Arr("One to four blocks, in display order.", OneOf("One block: a file, a chart or metrics, told apart by type.",
				Obj("A preview of a file of the workspace.", P{
					"type":      Const(`Always "file".`, "file"),
					"path":      workspacePath("Workspace-relative path of the file."),
					"repo":      Str("Repository name or id, when the task has several.").Len(1, kanban.MaxRepoRefLen),
					"title":     Str("Plain-text title of the file.").Len(1, kanban.MaxRichTitleLen),
					"caption":   Str("Why to look at the file.").Len(1, kanban.MaxRichTextLen),
					"mime_type": Str(`Media type, e.g. "text/markdown"; default guessed.`).Len(1, kanban.MaxRichMimeLen),
				}, "type", "path"),
				Obj("A line or bar chart.", P{
					"type":       Const(`Always "chart".`, "chart"),
					"chart_type": Enum("line for trends and time series; bar for comparing categories.", kanban.ChartTypes...),
					"title":      Str("Plain-text chart title.").Len(1, kanban.MaxRichTitleLen),
					"summary":    Str("What the chart shows, in words.").Len(1, kanban.MaxRichTextLen),
					"labels": Arr("Inline x-axis labels (with series, not csv).", Str("A label.").Len(1, kanban.MaxChartLabelLen)).
						Items(1, kanban.MaxChartLabels),
					"series": Arr("Inline series, each with one value per label.", Obj("One series.", P{
						"label": Str("Legend label; include the unit.").Len(1, kanban.MaxChartLabelLen),
						"values": Arr("One value per label, in label order; null for a gap.",
							S{"type": []string{"number", "null"}, "description": "A value, or null."}).Items(1, kanban.MaxChartLabels),
					}, "label", "values")).Items(1, kanban.MaxChartSeries),
					"csv": Obj("Chart data from a CSV file of the workspace instead of labels and series.", P{
						"path":     workspacePath("Workspace-relative path of a .csv file with a header row."),
						"repo":     Str("Repository name or id, when the task has several.").Len(1, kanban.MaxRepoRefLen),
						"x_column": Str("Header of the column of x-axis labels; rows keep file order.").Len(1, kanban.MaxChartLabelLen),
						"series": Arr("Numeric columns to draw.", Obj("One column.", P{
							"column": Str("Header of a numeric column (empty cells are gaps).").Len(1, kanban.MaxChartLabelLen),
							"label":  Str("Legend label with unit; default the header.").Len(1, kanban.MaxChartLabelLen),
						}, "column")).Items(1, kanban.MaxChartSeries),
					}, "path", "x_column", "series"),
				}, "type", "chart_type", "title", "summary"),
				Obj("A compact group of key figures.", P{
					"type": Const(`Always "metrics".`, "metrics"),
					"items": Arr("The metrics.", Obj("One metric.", P{
						"label":  Str("What is measured.").Len(1, kanban.MaxChartLabelLen),
						"value":  Str(`The value as shown, with its unit, e.g. "42 ms".`).Len(1, kanban.MaxMetricValueLen),
						"detail": Str("Context, e.g. the change since last time.").Len(1, kanban.MaxRichTextLen),
					}, "label", "value")).Items(1, kanban.MaxMetricItems),
				}, "type", "items"),
			)).Items(1, kanban.MaxRichBlocks),
		}, "version", "title", "blocks"),
		Output: artifactOut("The stored rich output.", "The output as stored: version, title, description and blocks, "+
			"with each file block's content (or binary=true), size and truncated, and each CSV chart's labels and series."),
		Hints: WriteHints,
		Run:   createArtifact(kanban.ArtifactRichOutput),
	},
}})
