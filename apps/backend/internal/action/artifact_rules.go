package action

import (
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// checkArtifactData applies the rules of an artifact kind that a JSON
// Schema cannot state (the MCP tools validate each kind's shape first).
// Today: a walkthrough step's line_end may not precede its line.
func checkArtifactData(kind string, data json.RawMessage) error {
	if kind != kanban.ArtifactWalkthrough {
		return nil
	}
	var w struct {
		Steps []struct {
			Line    int `json:"line"`
			LineEnd int `json:"line_end"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return kanban.FieldError("data", "walkthrough steps must have integer line and line_end")
	}
	for i, st := range w.Steps {
		if st.LineEnd != 0 && st.LineEnd < st.Line {
			return kanban.FieldError(fmt.Sprintf("data.steps[%d].line_end", i), "must be >= line")
		}
	}
	return nil
}
