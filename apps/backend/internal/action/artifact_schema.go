package action

import (
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// The artifacts agents publish: artifact.create takes one kind's data,
// checked against that kind's schema (a oneOf branch per kind), and the
// tool of each kind takes the same data as its arguments.

// artifactTaskRef is the task_id of the artifact actions.
func artifactTaskRef(what string) schema.S {
	return selfTaskRef(what + `: "self" (default) is your own task; another of your workspace by id (to write: a subtask or one you created).`)
}

// artifactKind is the kind of the artifact actions that take any kind.
func artifactKind() schema.S { return schema.Enum("Artifact kind.", kanban.ArtifactKinds...) }

// artifactCreateSchema is artifact.create's contract: one branch per kind
// agents publish, its data that kind's.
func artifactCreateSchema() schema.S {
	branch := func(kind string, task, data schema.S) schema.S {
		return schema.Obj("", schema.P{"task_id": task, "kind": schema.Const("Artifact kind.", kind), "data": data}, "kind", "data")
	}
	return schema.S{"type": "object", "oneOf": []any{
		branch(kanban.ArtifactWalkthrough, artifactTaskRef("Task to store the walkthrough on"), walkthroughData()),
		branch(kanban.ArtifactFindings, artifactTaskRef("Task to attach the findings to"), findingsData()),
		branch(kanban.ArtifactRichOutput, ownTaskRef("The artifact's task"), richOutputData()),
	}}
}

// walkthroughData is a walkthrough: a title and ordered steps, each
// pointing at a file and line range with an explanation.
func walkthroughData() schema.S {
	return schema.Obj("", schema.P{
		"title": schema.Str("Walkthrough title.").Len(1, kanban.MaxArtifactTitleLen),
		"steps": schema.Arr("The steps, in reading order.", schema.Obj("One step.", schema.P{
			"file":     schema.Str("File path, relative to the repository root.").Len(1, kanban.MaxPathLen),
			"line":     schema.Int("First line (1-based).").Range(1, kanban.MaxLineNumber),
			"line_end": schema.Int("Last line (1-based, >= line); omit for a single line.").Range(1, kanban.MaxLineNumber),
			"text":     schema.Str("What to notice here, in markdown.").Len(1, kanban.MaxWalkTextLen),
			"repo":     schema.Str("Repository name or id, when the task has several.").Len(1, kanban.MaxRepoRefLen),
			"title":    schema.Str("Short step title.").Len(1, kanban.MaxArtifactTitleLen),
		}, "file", "line", "text")).Items(1, kanban.MaxWalkSteps),
	}, "steps")
}

// findingsData is a code review's findings.
func findingsData() schema.S {
	return schema.Obj("", schema.P{
		"summary": schema.Str("Overall verdict of the review, in markdown.").Len(1, kanban.MaxFindingSummary),
		"findings": schema.Arr("The findings, most important first.", schema.Obj("One finding.", schema.P{
			"file":     schema.Str("File path, relative to the repository root.").Len(1, kanban.MaxPathLen),
			"line":     schema.Int("Line (1-based) the finding is about (its first line).").Range(1, kanban.MaxLineNumber),
			"line_end": schema.Int("Last line (1-based, >= line) when the finding spans a range.").Range(1, kanban.MaxLineNumber),
			"repo":     schema.Str("Repository name or id, when the task has several.").Len(1, kanban.MaxRepoRefLen),
			"severity": schema.Enum("How much it matters: blocker (must fix), major, minor or nit.", kanban.FindingSeverities...),
			"category": schema.Str(`Kind of issue, e.g. "correctness", "security", "style".`).Len(1, kanban.MaxFindingCategory),
			"title":    schema.Str("One-line summary.").Len(1, kanban.MaxArtifactTitleLen),
			"body":     schema.Str("Explanation, in markdown.").Len(1, kanban.MaxFindingTextLen),
			"suggestion": schema.Str("Suggested fix (code or prose).").
				Len(1, kanban.MaxFindingTextLen),
		}, "severity", "title", "body")).Items(0, kanban.MaxFindings),
	}, "findings")
}

// workspacePath is a path relative to the task's workspace.
func workspacePath(desc string) schema.S { return schema.Str(desc).Len(1, kanban.MaxRichPathLen) }

// richOutputData is a rich output: blocks of file previews, charts or
// metrics.
func richOutputData() schema.S {
	return schema.Obj("", schema.P{
		"version":     schema.S{"type": "integer", "const": 1, "description": "Format version; always 1."},
		"title":       schema.Str("Plain-text title of the presentation.").Len(1, kanban.MaxRichTitleLen),
		"description": schema.Str("Plain-text context for the whole presentation.").Len(0, kanban.MaxRichTextLen),
		"blocks": schema.Arr("One to four blocks, in display order.", schema.OneOf("One block: a file, a chart or metrics, told apart by type.",
			fileBlock(), chartBlock(), metricsBlock())).Items(1, kanban.MaxRichBlocks),
	}, "version", "title", "blocks")
}

func fileBlock() schema.S {
	return schema.Obj("A preview of a file of the workspace.", schema.P{
		"type":      schema.Const(`Always "file".`, "file"),
		"path":      workspacePath("Workspace-relative path of the file."),
		"repo":      schema.Str("Repository name or id, when the task has several.").Len(1, kanban.MaxRepoRefLen),
		"title":     schema.Str("Plain-text title of the file.").Len(1, kanban.MaxRichTitleLen),
		"caption":   schema.Str("Why to look at the file.").Len(1, kanban.MaxRichTextLen),
		"mime_type": schema.Str(`Media type, e.g. "text/markdown"; default guessed.`).Len(1, kanban.MaxRichMimeLen),
	}, "type", "path")
}

func chartBlock() schema.S {
	return schema.Obj("A line or bar chart.", schema.P{
		"type":       schema.Const(`Always "chart".`, "chart"),
		"chart_type": schema.Enum("line for trends and time series; bar for comparing categories.", kanban.ChartTypes...),
		"title":      schema.Str("Plain-text chart title.").Len(1, kanban.MaxRichTitleLen),
		"summary":    schema.Str("What the chart shows, in words.").Len(1, kanban.MaxRichTextLen),
		"labels": schema.Arr("Inline x-axis labels (with series, not csv).", schema.Str("A label.").Len(1, kanban.MaxChartLabelLen)).
			Items(1, kanban.MaxChartLabels),
		"series": schema.Arr("Inline series, each with one value per label.", schema.Obj("One series.", schema.P{
			"label": schema.Str("Legend label; include the unit.").Len(1, kanban.MaxChartLabelLen),
			"values": schema.Arr("One value per label, in label order; null for a gap.",
				schema.S{"type": []string{"number", "null"}, "description": "A value, or null."}).Items(1, kanban.MaxChartLabels),
		}, "label", "values")).Items(1, kanban.MaxChartSeries),
		"csv": schema.Obj("Chart data from a CSV file of the workspace instead of labels and series.", schema.P{
			"path":     workspacePath("Workspace-relative path of a .csv file with a header row."),
			"repo":     schema.Str("Repository name or id, when the task has several.").Len(1, kanban.MaxRepoRefLen),
			"x_column": schema.Str("Header of the column of x-axis labels; rows keep file order.").Len(1, kanban.MaxChartLabelLen),
			"series": schema.Arr("Numeric columns to draw.", schema.Obj("One column.", schema.P{
				"column": schema.Str("Header of a numeric column (empty cells are gaps).").Len(1, kanban.MaxChartLabelLen),
				"label":  schema.Str("Legend label with unit; default the header.").Len(1, kanban.MaxChartLabelLen),
			}, "column")).Items(1, kanban.MaxChartSeries),
		}, "path", "x_column", "series"),
	}, "type", "chart_type", "title", "summary")
}

func metricsBlock() schema.S {
	return schema.Obj("A compact group of key figures.", schema.P{
		"type": schema.Const(`Always "metrics".`, "metrics"),
		"items": schema.Arr("The metrics.", schema.Obj("One metric.", schema.P{
			"label":  schema.Str("What is measured.").Len(1, kanban.MaxChartLabelLen),
			"value":  schema.Str(`The value as shown, with its unit, e.g. "42 ms".`).Len(1, kanban.MaxMetricValueLen),
			"detail": schema.Str("Context, e.g. the change since last time.").Len(1, kanban.MaxRichTextLen),
		}, "label", "value")).Items(1, kanban.MaxMetricItems),
	}, "type", "items")
}
