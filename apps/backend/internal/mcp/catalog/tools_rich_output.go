package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// Bounds of show_rich_output_kandev (the reference's, and the backend's
// for what it reads from the workspace).
const (
	maxRichBlocks     = 4
	maxRichTitle      = 120
	maxRichText       = 500
	maxRichPath       = 1024
	maxRichRepo       = 255
	maxRichMime       = 128
	maxChartLabels    = 100
	maxChartSeries    = 4
	maxChartLabel     = 120
	maxMetricItems    = 6
	maxMetricValueLen = 200
)

// workspacePath is a path relative to the task's workspace.
func workspacePath(desc string) S { return Str(desc).Len(1, maxRichPath) }

var _ = declare(&Group{Name: "rich-output", Tools: []*Tool{
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
			"title":       Str("Plain-text title of the presentation.").Len(1, maxRichTitle),
			"description": Str("Plain-text context for the whole presentation.").Len(0, maxRichText),
			"blocks": Arr("One to four blocks, in display order.", OneOf("One block: a file, a chart or metrics, told apart by type.",
				Obj("A preview of a file of the workspace.", P{
					"type":      Const(`Always "file".`, "file"),
					"path":      workspacePath("Workspace-relative path of the file."),
					"repo":      Str("Repository name or id, when the task has several.").Len(1, maxRichRepo),
					"title":     Str("Plain-text title of the file.").Len(1, maxRichTitle),
					"caption":   Str("Why to look at the file.").Len(1, maxRichText),
					"mime_type": Str(`Media type, e.g. "text/markdown"; default guessed.`).Len(1, maxRichMime),
				}, "type", "path"),
				Obj("A line or bar chart.", P{
					"type":       Const(`Always "chart".`, "chart"),
					"chart_type": Enum("line for trends and time series; bar for comparing categories.", "line", "bar"),
					"title":      Str("Plain-text chart title.").Len(1, maxRichTitle),
					"summary":    Str("What the chart shows, in words.").Len(1, maxRichText),
					"labels": Arr("Inline x-axis labels (with series, not csv).", Str("A label.").Len(1, maxChartLabel)).
						Items(1, maxChartLabels),
					"series": Arr("Inline series, each with one value per label.", Obj("One series.", P{
						"label": Str("Legend label; include the unit.").Len(1, maxChartLabel),
						"values": Arr("One value per label, in label order; null for a gap.",
							S{"type": []string{"number", "null"}, "description": "A value, or null."}).Items(1, maxChartLabels),
					}, "label", "values")).Items(1, maxChartSeries),
					"csv": Obj("Chart data from a CSV file of the workspace instead of labels and series.", P{
						"path":     workspacePath("Workspace-relative path of a .csv file with a header row."),
						"repo":     Str("Repository name or id, when the task has several.").Len(1, maxRichRepo),
						"x_column": Str("Header of the column of x-axis labels; rows keep file order.").Len(1, maxChartLabel),
						"series": Arr("Numeric columns to draw.", Obj("One column.", P{
							"column": Str("Header of a numeric column (empty cells are gaps).").Len(1, maxChartLabel),
							"label":  Str("Legend label with unit; default the header.").Len(1, maxChartLabel),
						}, "column")).Items(1, maxChartSeries),
					}, "path", "x_column", "series"),
				}, "type", "chart_type", "title", "summary"),
				Obj("A compact group of key figures.", P{
					"type": Const(`Always "metrics".`, "metrics"),
					"items": Arr("The metrics.", Obj("One metric.", P{
						"label":  Str("What is measured.").Len(1, maxChartLabel),
						"value":  Str(`The value as shown, with its unit, e.g. "42 ms".`).Len(1, maxMetricValueLen),
						"detail": Str("Context, e.g. the change since last time.").Len(1, maxRichText),
					}, "label", "value")).Items(1, maxMetricItems),
				}, "type", "items"),
			)).Items(1, maxRichBlocks),
		}, "version", "title", "blocks"),
		Output: artifactOut("The stored rich output.", "The output as stored: version, title, description and blocks, "+
			"with each file block's content (or binary=true), size and truncated, and each CSV chart's labels and series."),
		Hints: WriteHints,
		Run:   createArtifact(kanban.ArtifactRichOutput),
	},
}})
