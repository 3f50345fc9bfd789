package kanban

import (
	"context"
	"slices"
	"time"
)

// DiffSide is the side of a unified diff a review comment is on: the new
// file's lines (added or unchanged) or the old file's (deleted).
type DiffSide string

// Diff sides.
const (
	SideNew DiffSide = "new"
	SideOld DiffSide = "old"
)

// DiffSides lists the diff sides.
var DiffSides = []DiffSide{SideNew, SideOld}

// Valid reports whether s is a known side.
func (s DiffSide) Valid() bool { return slices.Contains(DiffSides, s) }

// ReviewCommentState is where an operator's review comment is.
type ReviewCommentState string

// Review comment states: open (written, not yet sent), sent (delivered to
// the task's agent with a review), resolved (the operator closed it), and
// outdated (the lines it is anchored to changed since).
const (
	CommentOpen     ReviewCommentState = "open"
	CommentSent     ReviewCommentState = "sent"
	CommentResolved ReviewCommentState = "resolved"
	CommentOutdated ReviewCommentState = "outdated"
)

// ReviewCommentStates lists the review comment states.
var ReviewCommentStates = []ReviewCommentState{CommentOpen, CommentSent, CommentResolved, CommentOutdated}

// Valid reports whether s is a known state.
func (s ReviewCommentState) Valid() bool { return slices.Contains(ReviewCommentStates, s) }

// Bounds of a review comment.
const (
	MaxReviewCommentLen = 10_000     // the body, in characters
	MaxDiffLine         = 10_000_000 // a line number
	MaxCommentLines     = 1000       // lines one comment spans
	MaxAnchorTextLen    = 64 << 10   // the anchored lines' text, in bytes
)

// ReviewComment is an operator's comment on lines of a task's diff in one
// repository. Its anchor — the commit the diff was read at and the text
// of the lines commented on — lets the comment be marked outdated when
// those lines change.
type ReviewComment struct {
	ID           string   `json:"id"`
	TaskID       string   `json:"task_id"`
	RepositoryID string   `json:"repository_id"`
	Path         string   `json:"path"`
	StartLine    int      `json:"start_line"`
	EndLine      int      `json:"end_line"`
	Side         DiffSide `json:"side"`
	Body         string   `json:"body"`
	// AnchorCommit is the worktree's HEAD when the comment was written;
	// AnchorText the text of lines StartLine..EndLine on Side then.
	AnchorCommit string             `json:"anchor_commit"`
	AnchorText   string             `json:"anchor_text"`
	State        ReviewCommentState `json:"state"`
	Author       string             `json:"author"`
	CreatedAt    time.Time          `json:"created_at"`
	UpdatedAt    time.Time          `json:"updated_at"`
	SentAt       *time.Time         `json:"sent_at,omitempty"`
	ResolvedAt   *time.Time         `json:"resolved_at,omitempty"`
}

// ReviewCommentFilter narrows a task's review comments: by repository,
// file path and state (each when set).
type ReviewCommentFilter struct {
	TaskID       string
	RepositoryID string
	Path         string
	State        ReviewCommentState
}

// ReviewService stores an operator's review comments on a task's diff.
// Whether a comment's anchored lines changed is for the caller, which
// reads the worktree, to tell (MarkReviewCommentsOutdated).
type ReviewService interface {
	// CreateReviewComment records an open comment: VALIDATION_ERROR for a
	// bad field or a repository not linked to the task, NOT_FOUND without
	// the task.
	CreateReviewComment(ctx context.Context, c ReviewComment) (*ReviewComment, error)
	// GetReviewComment: NOT_FOUND when missing.
	GetReviewComment(ctx context.Context, id string) (*ReviewComment, error)
	// ListReviewComments lists a task's comments matching f, oldest first
	// (NOT_FOUND without the task).
	ListReviewComments(ctx context.Context, f ReviewCommentFilter, p Page) (*List[ReviewComment], error)
	// UpdateReviewComment changes a comment's body (only while open:
	// CONFLICT otherwise) and its state (not to outdated).
	UpdateReviewComment(ctx context.Context, id string, body *string, state *ReviewCommentState) (*ReviewComment, error)
	// MarkReviewCommentsOutdated marks the open and sent ones of a task's
	// comments ids outdated and returns them.
	MarkReviewCommentsOutdated(ctx context.Context, taskID string, ids []string) ([]ReviewComment, error)
	// SendReview appends m (a prompt) to session m.SessionID of the task
	// and marks the task's comments ids sent, in one transaction: CONFLICT
	// (and nothing written) unless every one of them is still open.
	SendReview(ctx context.Context, taskID string, ids []string, m Message) (*Message, []ReviewComment, error)
	// DeleteReviewComment: NOT_FOUND when missing.
	DeleteReviewComment(ctx context.Context, id string) error
}
