package kanban

import (
	"context"
	"time"
)

// MaxCommentLen bounds a task comment's body, in characters.
const MaxCommentLen = 10_000

// CommentAuthorOperator is the author of a comment the operator wrote; an
// agent's comment is authored "session:<id>".
const CommentAuthorOperator = "operator"

// Comment is a note on a task from the operator or an agent: what Office
// teams talk through. Unlike a review comment it is anchored to no line;
// unlike a prompt it is delivered to no agent by itself (the step's
// on_comment automations decide who is woken).
type Comment struct {
	ID     string `json:"id"`
	TaskID string `json:"task_id"`
	// Author is "operator" or "session:<id>".
	Author string `json:"author"`
	// AgentProfileID is the profile of the session that wrote it ("" for
	// the operator).
	AgentProfileID string    `json:"agent_profile_id,omitempty"`
	Body           string    `json:"body"`
	CreatedAt      time.Time `json:"created_at"`
}

// CommentService stores task comments.
type CommentService interface {
	// AddComment records a comment (ID and time assigned):
	// VALIDATION_ERROR for an empty or oversized body, NOT_FOUND without
	// the task.
	AddComment(ctx context.Context, c Comment) (*Comment, error)
	// ListComments lists a task's comments, oldest first (NOT_FOUND
	// without the task).
	ListComments(ctx context.Context, taskID string, p Page) (*List[Comment], error)
}
