package catalog

import (
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var groupDiagnostics = declare(&Group{Name: "diagnostics", Tools: []*Tool{
	{
		Name:   "get_diagnostic_bundle_kandev",
		Action: kanban.ActionDiagnosticBundleCreate,
		Drop:   []string{"task_id"},
		Title:  "Get diagnostic bundle",
		Description: "Collect a bounded, redacted diagnostic ZIP for the current task session and materialize it inside this " +
			"execution workspace (under .kandev/diagnostics/; the newest 10 are kept). Request backend first for backend/runtime " +
			"issues, frontend for browser issues, or all only when correlation requires both. One bundle per session per 10 s.",
		Output: out("The bundle written.", P{
			"path":    Str("Path of the zip, relative to your workspace (your working directory)."),
			"bytes":   Int("Zip size."),
			"entries": Arr("Files in the zip.", out("A file.", P{"name": Str("Name."), "bytes": Int("Size.")}, "name")),
		}, "path", "bytes", "entries"),
		Hints: Hints{Destructive: true},
	},
}})
