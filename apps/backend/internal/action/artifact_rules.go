package action

import (
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// checkArtifactData applies the rules of an artifact kind that a JSON
// Schema cannot state (the MCP tools validate each kind's shape first): a
// walkthrough step's or a finding's line_end may not precede its line, and
// a chart series has one value per label.
func checkArtifactData(kind string, data json.RawMessage) error {
	switch kind {
	case kanban.ArtifactWalkthrough:
		return checkLineRanges(data, "steps")
	case kanban.ArtifactFindings:
		return checkLineRanges(data, "findings")
	}
	return nil
}

// checkLineRanges requires line_end >= line in every item of list (the
// steps of a walkthrough, the findings of a review).
func checkLineRanges(data json.RawMessage, list string) error {
	var (
		fields map[string]json.RawMessage
		items  []struct {
			Line    json.Number `json:"line"`
			LineEnd json.Number `json:"line_end"`
		}
	)
	if json.Unmarshal(data, &fields) != nil || json.Unmarshal(fields[list], &items) != nil {
		return nil //nolint:nilerr // not the expected shape: the schema already validated it; nothing to compare
	}
	for i, st := range items {
		line, err1 := st.Line.Int64()
		end, err2 := st.LineEnd.Int64()
		if err1 == nil && err2 == nil && end < line {
			return kanban.FieldError(fmt.Sprintf("%s[%d].line_end", list, i), "must be >= line")
		}
	}
	return nil
}
