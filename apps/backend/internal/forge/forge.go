// Package forge talks to code forges about a task's pull request (a
// merge request on GitLab): open it, read its state, reviews, review
// comments and checks, and merge it. Forge is the interface the action
// layer and the PR watcher use; GitHub implements it with
// google/go-github, GitLab with gitlab-org/api/client-go.
//
// Reads are conditional (ETag / If-None-Match): an unchanged answer comes
// back as a 304, which costs no rate limit, and is reported NotModified.
// The ETags can outlive the client (Validators): a NotModified answer to
// a caller's own ETag carries no value, the caller keeps its own.
// A rate-limited call fails at once with an *Error whose RetryAfter says
// when to try again (Backoff turns it into the watcher's next delay).
// Every error is an *Error whose text is safe to show any caller: never
// the token, never the forge's response body, never caller text.
//
// It imports the standard library, go-github, GitLab's client-go, kanban
// (error codes), credential and redact; nothing else of Kandev.
package forge

import (
	"context"
	"time"
)

// Forge is one forge account: a server-side token for an API. Every
// method may also return VALIDATION_ERROR (input it refused before any
// request), UNAUTHORIZED (the token was refused), FORBIDDEN (the token may
// not), NOT_FOUND and UNAVAILABLE (unreachable, timed out, the forge
// failed, or rate-limited: then *Error.RetryAfter says when to retry).
type Forge interface {
	// OpenPR opens a pull request. VALIDATION_ERROR for bad input or a
	// head/base the forge does not know; CONFLICT when one is already
	// open for the branch.
	OpenPR(ctx context.Context, repo Repo, in NewPR) (*PR, error)
	// PR reads a pull request. NOT_FOUND when there is none.
	PR(ctx context.Context, repo Repo, number int) (*PR, error)
	// Reviews lists the reviews submitted after since (all when zero),
	// oldest first, at most MaxItems.
	Reviews(ctx context.Context, repo Repo, number int, since time.Time) (*Reviews, error)
	// ReviewComments lists the line comments updated at or after since
	// (all when zero), oldest first, at most MaxItems.
	ReviewComments(ctx context.Context, repo Repo, number int, since time.Time) (*ReviewComments, error)
	// Checks combines the check runs and commit statuses of a commit.
	Checks(ctx context.Context, repo Repo, sha string) (*Checks, error)
	// CheckLog returns the bounded end of a failed check's log (GitHub
	// Actions jobs); NOT_FOUND when the check has no log.
	CheckLog(ctx context.Context, repo Repo, checkID int64) (*Log, error)
	// Merge merges a pull request. CONFLICT when it is not mergeable or
	// its head is no longer ExpectedHeadSHA.
	Merge(ctx context.Context, repo Repo, number int, in MergeRequest) (*MergeResult, error)
}

// Bounds of what a forge returns.
const (
	MaxItems     = 1000     // reviews or comments per call
	MaxTextBytes = 16 << 10 // a review's or comment's body, a check's summary
	MaxLogBytes  = 16 << 10 // a check log excerpt
)

// Repo names a repository on a forge: GitHub's owner and name, or a
// GitLab project's namespace path ("group/subgroup") and path.
type Repo struct {
	Owner string `json:"owner"`
	Name  string `json:"name"`
}

// PRState is a pull request's state.
type PRState string

// Pull request states.
const (
	PROpen   PRState = "open"
	PRDraft  PRState = "draft"
	PRMerged PRState = "merged"
	PRClosed PRState = "closed"
)

// NewPR is a pull request to open: the task branch (Head) into Base.
type NewPR struct {
	Title string `json:"title"`
	Body  string `json:"body,omitempty"`
	Head  string `json:"head"`
	Base  string `json:"base"`
	Draft bool   `json:"draft,omitempty"`
}

// PR is a pull request as the forge reports it.
type PR struct {
	Number  int     `json:"number"`
	State   PRState `json:"state"`
	Title   string  `json:"title"`
	URL     string  `json:"url"` // the page people open
	Head    string  `json:"head"`
	Base    string  `json:"base"`
	HeadSHA string  `json:"head_sha"`
	// Mergeable is nil while the forge is still computing it.
	Mergeable *bool `json:"mergeable,omitempty"`
	// MergeableState is GitHub's mergeable_state (clean, blocked, behind,
	// dirty, unstable, draft, unknown).
	MergeableState string     `json:"mergeable_state,omitempty"`
	MergedAt       *time.Time `json:"merged_at,omitempty"`
	UpdatedAt      time.Time  `json:"updated_at"`
	// RequestedReviewers are the logins whose review is requested (teams
	// are not listed).
	RequestedReviewers []string `json:"requested_reviewers,omitempty"`
	// NotModified: the forge answered 304 to the conditional read: the
	// pull request is as it was last read (every other field is empty
	// when the 304 answered the caller's Validators).
	NotModified bool `json:"-"`
}

// ReviewState is a review's verdict.
type ReviewState string

// Review states.
const (
	ReviewApproved         ReviewState = "approved"
	ReviewChangesRequested ReviewState = "changes_requested"
	ReviewCommented        ReviewState = "commented"
	ReviewDismissed        ReviewState = "dismissed"
	ReviewPending          ReviewState = "pending"
)

// Review is a submitted review.
type Review struct {
	ID          int64       `json:"id"`
	Author      string      `json:"author"`
	State       ReviewState `json:"state"`
	Body        string      `json:"body"` // at most MaxTextBytes
	CommitSHA   string      `json:"commit_sha"`
	SubmittedAt time.Time   `json:"submitted_at"`
}

// Reviews is a list of reviews.
type Reviews struct {
	Items     []Review `json:"items"`
	Truncated bool     `json:"truncated"` // more than MaxItems
	// NotModified: every page answered 304 (Items is empty when they
	// answered the caller's Validators).
	NotModified bool `json:"-"`
}

// ReviewComment is a comment on lines of the pull request's diff.
type ReviewComment struct {
	ID        int64     `json:"id"`
	ReviewID  int64     `json:"review_id,omitempty"`
	InReplyTo int64     `json:"in_reply_to,omitempty"`
	Author    string    `json:"author"`
	Body      string    `json:"body"` // at most MaxTextBytes
	Path      string    `json:"path"`
	Line      int       `json:"line,omitempty"` // 0 when outdated
	StartLine int       `json:"start_line,omitempty"`
	Side      string    `json:"side,omitempty"` // LEFT or RIGHT
	CommitSHA string    `json:"commit_sha"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	URL       string    `json:"url,omitempty"`
}

// ReviewComments is a list of review comments.
type ReviewComments struct {
	Items     []ReviewComment `json:"items"`
	Truncated bool            `json:"truncated"`
	// NotModified: as Reviews'.
	NotModified bool `json:"-"`
}

// CheckState is the combined state of a commit's checks.
type CheckState string

// Check states.
const (
	ChecksNone    CheckState = "none" // no checks at all
	ChecksPending CheckState = "pending"
	ChecksPassing CheckState = "passing"
	ChecksFailing CheckState = "failing"
)

// Checks is the combined state of a commit's check runs and statuses: any
// failure is failing, else anything unfinished is pending.
type Checks struct {
	SHA     string     `json:"sha"`
	State   CheckState `json:"state"`
	Total   int        `json:"total"`
	Passed  int        `json:"passed"`
	Failed  int        `json:"failed"`
	Pending int        `json:"pending"`
	// Failing describes each failed check (at most 50).
	Failing []FailedCheck `json:"failing,omitempty"`
	// NotModified: neither the check runs nor the statuses changed since
	// the last read (only SHA is set when the 304s answered the caller's
	// Validators).
	NotModified bool `json:"-"`
}

// FailedCheck is one failed check run or commit status.
type FailedCheck struct {
	// ID is the check run's (0 for a commit status); CheckLog takes it.
	ID         int64  `json:"id,omitempty"`
	Name       string `json:"name"`
	Kind       string `json:"kind"`       // "check_run", "status"; GitLab's "job" or "pipeline"
	Conclusion string `json:"conclusion"` // failure, timed_out, cancelled, error, …
	// Summary is the check's own report (title, summary, text), at most
	// MaxTextBytes.
	Summary string `json:"summary,omitempty"`
	URL     string `json:"url,omitempty"`
	HasLog  bool   `json:"has_log"` // a GitHub Actions or GitLab CI job: CheckLog can fetch it
}

// Log is the end of a check's log.
type Log struct {
	Text      string `json:"text"`      // the last lines, at most MaxLogBytes
	Truncated bool   `json:"truncated"` // the log is longer than Text
}

// MergeMethod is how a pull request is merged.
type MergeMethod string

// Merge methods.
const (
	MergeCommit MergeMethod = "merge"
	MergeSquash MergeMethod = "squash"
	MergeRebase MergeMethod = "rebase"
)

// MergeRequest is a merge. ExpectedHeadSHA, when set, makes the forge
// refuse the merge if the head moved (CONFLICT) — what was checked is
// what is merged.
type MergeRequest struct {
	Method          MergeMethod `json:"method"`
	ExpectedHeadSHA string      `json:"expected_head_sha,omitempty"`
	CommitTitle     string      `json:"commit_title,omitempty"`
	CommitMessage   string      `json:"commit_message,omitempty"`
}

// MergeResult is a done merge.
type MergeResult struct {
	Merged bool   `json:"merged"`
	SHA    string `json:"sha"` // the merge (or squash, or last rebased) commit
}
