package catalog

import (
	"context"
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var groupWalkthrough = declare(&Group{Name: "walkthrough", Tools: []*Tool{
	{
		Name:   "show_walkthrough_kandev",
		Action: kanban.ActionArtifactCreate,
		Title:  "Show walkthrough",
		Description: "Publish a guided tour of code for the operator: an ordered list of steps, each pointing at a file " +
			"and line range with an explanation. It is stored on your task (or task_id: a subtask or a task you created); a new " +
			"walkthrough replaces the shown one (get_walkthrough_kandev returns the latest).",
		Input:  artifactInput(kanban.ArtifactWalkthrough),
		Output: artifactOut("The stored walkthrough.", "The walkthrough as given: title and steps."),
		Hints:  WriteHints,
		Run:    createArtifact(kanban.ArtifactWalkthrough),
	},
	{
		Name:        "get_walkthrough_kandev",
		Action:      kanban.ActionArtifactLatest,
		Title:       "Get walkthrough",
		Description: "Read the latest walkthrough shown on a task (default your own). NOT_FOUND when there is none.",
		Drop:        []string{"kind"},
		Output:      artifactOut("The latest walkthrough.", "The walkthrough: title and steps."),
		Hints:       ReadHints,
		Run:         taskArtifact(kanban.ArtifactWalkthrough),
	},
	{
		Name:        "delete_walkthrough_kandev",
		Action:      kanban.ActionArtifactDelete,
		Title:       "Delete walkthrough",
		Description: "Delete every walkthrough shown on a task (default your own). Deleting when there is none succeeds with deleted 0.",
		Drop:        []string{"kind"},
		Output: out("How many walkthroughs were deleted.", P{
			"deleted": Int("Number of walkthroughs deleted."),
		}, "deleted"),
		Hints: DestructiveHints,
		Run:   taskArtifact(kanban.ArtifactWalkthrough),
	},
}})

// artifactOut is the output of a stored artifact; data is described, not
// pinned, so artifacts written before a schema change still validate.
func artifactOut(desc, dataDesc string) S {
	return out(desc, P{
		"id":         Str("Artifact id."),
		"task_id":    Str("The task it is stored on."),
		"session_id": Str("The session that published it, if any."),
		"kind":       Str("Artifact kind."),
		"data":       S{"type": "object", "description": dataDesc},
		"created_at": Str("When it was published (RFC 3339)."),
	}, "id", "task_id", "kind", "data", "created_at")
}

// createArtifact returns a Run that stores the arguments (but task_id) as
// an artifact of kind on task_id, by default the caller's own task.
func createArtifact(kind string) func(ctx context.Context, c Call) (any, error) {
	return func(ctx context.Context, c Call) (any, error) {
		var data map[string]json.RawMessage
		if err := c.Decode(&data); err != nil {
			return nil, err
		}
		task := json.RawMessage(`"self"`)
		if t, ok := data["task_id"]; ok {
			task = t
			delete(data, "task_id")
		}
		return c.Forward(ctx, map[string]any{"task_id": task, "kind": kind, "data": data})
	}
}

// taskArtifact returns a Run for an action on a task's artifacts of kind:
// task_id, by default the caller's own task.
func taskArtifact(kind string) func(ctx context.Context, c Call) (any, error) {
	return func(ctx context.Context, c Call) (any, error) {
		var in struct {
			TaskID string `json:"task_id"`
		}
		if err := c.Decode(&in); err != nil {
			return nil, err
		}
		if in.TaskID == "" {
			in.TaskID = "self"
		}
		return c.Forward(ctx, map[string]string{"task_id": in.TaskID, "kind": kind})
	}
}
