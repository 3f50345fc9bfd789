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

// ArtifactKinds lists the artifact kinds.
var ArtifactKinds = []string{ArtifactWalkthrough, ArtifactFindings, ArtifactRichOutput, ArtifactStepComplete, ArtifactDecision}

// MaxArtifactDataBytes bounds an artifact's data, as stored JSON.
const MaxArtifactDataBytes = 1 << 20

// DocumentTypes are the content types of task documents; the first is a
// new document's default ("custom" is the reference product's default for
// a document of its own kind; shown as text).
var DocumentTypes = []string{"markdown", "text", "json", "html", "custom"}

// Bounds of plans and task documents, shared by the tool schemas and the
// store.
const (
	MaxPlanTitleLen    = 200 // a plan's or a document's title
	DocumentKeyPattern = `^[a-z0-9][a-z0-9._-]{0,63}$`
)
