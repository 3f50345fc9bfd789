package kanban

import (
	"encoding/json"
	"time"
)

// Plan is a task's plan; each update keeps the previous text as a revision.
type Plan struct {
	TaskID    string    `json:"task_id"`
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	Revision  int       `json:"revision"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Document is a keyed document attached to a task, with revisions.
type Document struct {
	TaskID    string    `json:"task_id"`
	Key       string    `json:"key"`
	Type      string    `json:"type"`
	Title     string    `json:"title"`
	Content   string    `json:"content,omitempty"`
	Revision  int       `json:"revision"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Artifact is a JSON payload a session publishes about its task: a
// walkthrough, review findings, rich output, a step-completion signal or a
// step decision. Kind says which; Data is validated by the MCP layer's
// schema before it reaches the store.
type Artifact struct {
	ID        string          `json:"id"`
	TaskID    string          `json:"task_id"`
	SessionID string          `json:"session_id,omitempty"`
	Kind      string          `json:"kind"`
	Data      json.RawMessage `json:"data"`
	CreatedAt time.Time       `json:"created_at"`
}

// Artifact kinds.
const (
	ArtifactWalkthrough  = "walkthrough"
	ArtifactFindings     = "review_findings"
	ArtifactRichOutput   = "rich_output"
	ArtifactStepComplete = "step_complete"
	ArtifactDecision     = "step_decision"
)

// DocumentTypes are the content types of task documents ("custom" is the
// reference product's default for a document of its own kind; shown as text).
var DocumentTypes = []string{"markdown", "text", "json", "html", "custom"}
