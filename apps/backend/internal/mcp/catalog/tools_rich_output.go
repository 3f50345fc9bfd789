package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// Bounds of show_rich_output_kandev.
const (
	maxRichBlocks    = 4
	maxRichFileChars = 64 << 10
	maxRichLanguage  = 50
	maxChartLabels   = 50
	maxChartSeries   = 10
	maxChartLabel    = 100
	maxMetricItems   = 20
	maxMetricUnit    = 20
)

// num is a number property.
func num(desc string) S { return S{"type": "number", "description": desc} }

var _ = declare(&Group{Name: "rich-output", Tools: []*Tool{
	{
		Name:   "show_rich_output_kandev",
		Action: "artifact.create",
		Title:  "Show rich output",
		Description: "Show the operator structured output next to your conversation: up to 4 blocks, each a file " +
			"(code or text with a language), a chart (bar, line or pie) or a set of metrics. Stored on your task and " +
			"returned.",
		Input: Obj("", P{
			"version": S{"type": "integer", "const": 1, "description": "Format version; always 1."},
			"title":   Str("Heading shown above the blocks.").Len(1, maxArtifactTitle),
			"blocks": Arr("The blocks, in display order.", OneOf("One block: a file, a chart or metrics, told apart by type.",
				Obj("A file or snippet.", P{
					"type":     Const(`Always "file".`, "file"),
					"path":     Str("File path or name shown as the caption.").Len(1, maxFilePath),
					"language": Str(`Syntax highlighting language, e.g. "go".`).Len(1, maxRichLanguage),
					"content":  Str("The text, at most 65536 characters.").Len(0, maxRichFileChars),
				}, "type", "path", "content"),
				Obj("A chart.", P{
					"type":       Const(`Always "chart".`, "chart"),
					"chart_type": Enum("Chart kind.", "bar", "line", "pie"),
					"title":      Str("Chart title.").Len(1, maxArtifactTitle),
					"labels": Arr("Category or x-axis labels.", Str("A label.").Len(1, maxChartLabel)).
						Items(1, maxChartLabels),
					"series": Arr("Data series; each has one value per label.", Obj("One series.", P{
						"name":   Str("Series name (legend).").Len(1, maxChartLabel),
						"values": Arr("One value per label, in label order.", num("A value.")).Items(1, maxChartLabels),
					}, "name", "values")).Items(1, maxChartSeries),
				}, "type", "chart_type", "labels", "series"),
				Obj("Key figures.", P{
					"type": Const(`Always "metrics".`, "metrics"),
					"items": Arr("The metrics.", Obj("One metric.", P{
						"label": Str("What is measured.").Len(1, maxChartLabel),
						"value": num("The value."),
						"unit":  Str(`Unit, e.g. "ms" or "%".`).Len(1, maxMetricUnit),
						"delta": num("Change since the previous measurement, in the same unit."),
					}, "label", "value")).Items(1, maxMetricItems),
				}, "type", "items"),
			)).Items(1, maxRichBlocks),
		}, "version", "title", "blocks"),
		Output: artifactOut("The stored rich output.", "The output as given: version, title and blocks."),
		Hints:  WriteHints,
		Run:    createArtifact(kanban.ArtifactRichOutput),
	},
}})
