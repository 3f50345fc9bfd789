package kanban

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// ForgeKind is the forge a pull (GitHub) or merge (GitLab) request is on.
type ForgeKind string

// Forge kinds.
const (
	ForgeGitHub ForgeKind = "github"
	ForgeGitLab ForgeKind = "gitlab"
)

// ForgeKinds lists the forge kinds.
var ForgeKinds = []ForgeKind{ForgeGitHub, ForgeGitLab}

// Valid reports whether k is a known forge.
func (k ForgeKind) Valid() bool { return slices.Contains(ForgeKinds, k) }

// PRState is a pull request's state.
type PRState string

// Pull request states.
const (
	PROpen   PRState = "open"
	PRDraft  PRState = "draft"
	PRMerged PRState = "merged"
	PRClosed PRState = "closed"
)

// PRStates lists the pull request states.
var PRStates = []PRState{PROpen, PRDraft, PRMerged, PRClosed}

// Valid reports whether s is a known state.
func (s PRState) Valid() bool { return slices.Contains(PRStates, s) }

// Watched reports whether the PR watcher polls a pull request in state s
// (open or draft: merged and closed are final).
func (s PRState) Watched() bool { return s == PROpen || s == PRDraft }

// ChecksState is the combined state of a pull request's head checks.
type ChecksState string

// Checks states.
const (
	ChecksPassing ChecksState = "passing"
	ChecksFailing ChecksState = "failing"
	ChecksPending ChecksState = "pending"
	ChecksNone    ChecksState = "none"
)

// ChecksStates lists the checks states.
var ChecksStates = []ChecksState{ChecksPassing, ChecksFailing, ChecksPending, ChecksNone}

// Valid reports whether s is a known checks state.
func (s ChecksState) Valid() bool { return slices.Contains(ChecksStates, s) }

// ReviewState is the combined verdict of a pull request's reviews: the
// latest verdict of each reviewer, changes requested winning over
// approved; pending while a requested review has not come.
type ReviewState string

// Review states.
const (
	ReviewApproved         ReviewState = "approved"
	ReviewChangesRequested ReviewState = "changes_requested"
	ReviewPending          ReviewState = "pending"
	ReviewNone             ReviewState = "none"
)

// ReviewStates lists the review states.
var ReviewStates = []ReviewState{ReviewApproved, ReviewChangesRequested, ReviewPending, ReviewNone}

// Valid reports whether s is a known review state.
func (s ReviewState) Valid() bool { return slices.Contains(ReviewStates, s) }

// Bounds of a pull request's record.
const (
	MaxPRNumber     = 1<<31 - 1 // a pull or merge request number (a 32-bit column)
	MaxForgeRepoLen = 255       // "owner/name", or a GitLab project path
	MaxPRTitleLen   = 256       // GitHub's own bound of a title
	MaxPRBodyLen    = 64 << 10  // a pull request's description, a merge commit's message
	// MaxCommitMessageBytes and MaxCommitPaths bound a commit Kandev makes.
	MaxCommitMessageBytes = 64 << 10
	MaxCommitPaths        = 1000
	// A commit message written by the task's agent (task.commit with
	// message_from_agent): the operator's instructions, and how many
	// seconds the commit waits for the agent's answer by default and at
	// most.
	MaxCommitInstructionsLen = 2000
	DefaultCommitMessageWait = 120
	MaxCommitMessageWait     = 600
	MaxPRErrorLen            = 1000 // the automation's last error, as shown
	// MaxRequestedReviewers bounds the requested reviewers kept of a pull
	// request (GitHub allows 15 users and teams together).
	MaxRequestedReviewers = 50
	// MaxPRValidators bounds the ETags kept of a pull request's reads.
	MaxPRValidators = 64
)

// PullRequestBadge is what a board card shows of one of its task's pull
// requests (task.pr.badges): a lean PullRequest, so that the badges of a
// 1,000-card board stay a small read.
type PullRequestBadge struct {
	ID        string      `json:"id"`
	TaskID    string      `json:"task_id"`
	Number    int         `json:"number"`
	State     PRState     `json:"state"`
	Checks    ChecksState `json:"checks"`
	Review    ReviewState `json:"review"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// PullRequest is a pull (or merge) request opened for a task in one of its
// repositories: what the forge last said of it, its automation switches
// (PROptions), the automation's own state, and the watcher's bookkeeping.
type PullRequest struct {
	ID           string    `json:"id"`
	TaskID       string    `json:"task_id"`
	RepositoryID string    `json:"repository_id"`
	Forge        ForgeKind `json:"forge"`
	// ForgeRepo names the repository on the forge: "owner/name" on GitHub.
	ForgeRepo  string      `json:"forge_repo"`
	Number     int         `json:"number"`
	URL        string      `json:"url"`
	Title      string      `json:"title,omitempty"`
	HeadBranch string      `json:"head_branch,omitempty"`
	BaseBranch string      `json:"base_branch,omitempty"`
	State      PRState     `json:"state"`
	HeadSHA    string      `json:"head_sha,omitempty"`
	Checks     ChecksState `json:"checks"`
	Review     ReviewState `json:"review"`
	// Mergeable is nil while the forge has not computed it.
	Mergeable *bool     `json:"mergeable,omitempty"`
	Options   PROptions `json:"options"`
	// Automation is what the automation did on this pull request.
	Automation PRAutomationState `json:"automation"`
	Watch      PRWatch           `json:"watch"`
	CreatedAt  time.Time         `json:"created_at"`
	UpdatedAt  time.Time         `json:"updated_at"`
}

// PROptions are a pull request's automation switches (the reference's
// five, scoped to one pull request; all off until set).
type PROptions struct {
	AutoFixEnabled          bool `json:"auto_fix_enabled"`
	AutoMergeEnabled        bool `json:"auto_merge_enabled"`
	PromptOnReviewRequested bool `json:"prompt_on_review_requested"`
	PromptOnMerged          bool `json:"prompt_on_merged"`
	PromptOnClosed          bool `json:"prompt_on_closed"`
}

// PRAutomationState is what the automation did on a pull request: the
// auto-fix rounds (at most MaxAutoFixRounds; then it pauses), the last
// merge attempt and the last error, as the reference's pr_states show it.
type PRAutomationState struct {
	AutoFixRounds      int        `json:"auto_fix_round_count"`
	LastFixAt          *time.Time `json:"last_fix_enqueued_at"`
	AutoFixExhaustedAt *time.Time `json:"auto_fix_exhausted_at"`
	LastMergeAttemptAt *time.Time `json:"last_merge_attempt_at"`
	LastError          string     `json:"last_error,omitempty"`
}

// PRWatch is the PR watcher's bookkeeping of one pull request.
type PRWatch struct {
	LastPolledAt *time.Time `json:"last_polled_at,omitempty"`
	// NextPollAt is when the pull request is due; a poller claims it by
	// moving NextPollAt past its poll (ClaimDuePullRequests).
	NextPollAt time.Time `json:"next_poll_at"`
	// Validators are the ETags of the last poll's reads (URL path → ETag),
	// at most MaxPRValidators.
	Validators map[string]string `json:"-"`
	// LastReviewID and LastCommentID are the newest review and review
	// comment a poll has seen; CommentsSince is the update time from which
	// review comments are read next.
	LastReviewID  int64     `json:"last_review_id,omitempty"`
	LastCommentID int64     `json:"last_comment_id,omitempty"`
	CommentsSince time.Time `json:"comments_since"`
	// LastCheckID is the failing check last reported; ChecksReported the
	// final checks result reported ("failing:SHA", "passing:SHA").
	LastCheckID    int64  `json:"last_check_id,omitempty"`
	ChecksReported string `json:"checks_reported,omitempty"`
	// MergeSHA is the head the automation decided to merge (once per head).
	MergeSHA string `json:"merge_sha,omitempty"`
	// RequestedReviewers is the last observed set (nil before the first
	// observation, which only sets the baseline); ReviewRequests counts
	// the requests reported, Reopens the closed → open transitions seen.
	RequestedReviewers []string `json:"requested_reviewers"`
	ReviewRequests     int      `json:"review_requests,omitempty"`
	Reopens            int      `json:"reopens,omitempty"`
	// Failures counts the consecutive failed polls (backoff).
	Failures int `json:"failures,omitempty"`
	// Version changes with every write of the row: a poll records its
	// result only over the version it claimed.
	Version int64 `json:"version"`
}

// Bounds of PR automation.
const (
	// MaxAutoFixRounds is how many auto-fix prompts one pull request gets
	// before the automation pauses (the reference's cap).
	MaxAutoFixRounds = 10
	// MaxAutoFixExcerpt bounds the failing check's log excerpt in an
	// auto-fix prompt.
	MaxAutoFixExcerpt = 8 << 10
	// MaxReviewerLoginLen bounds a forge login.
	MaxReviewerLoginLen = 100
)

// AutoFixFeedback is the placeholder an auto-fix prompt's text holds for
// the pull request's feedback (the failing check's name and log
// excerpt); a prompt without it is sent as it is.
const AutoFixFeedback = "{{pr.feedback}}"

// DefaultAutoFixPrompt is the auto-fix prompt of a task with no override.
const DefaultAutoFixPrompt = "A check failed on your pull request. Find the cause, fix it, commit and push the fix.\n\n" + AutoFixFeedback

// PRAutomation is a task's PR automation settings as
// get_task_pr_automation_kandev returns them: the task-wide fields, each
// linked pull request's switches (PROptions) and automation state, and
// the aggregate switches, true when every linked pull request has the
// switch on (and at least one is linked).
type PRAutomation struct {
	TaskID                  string           `json:"task_id"`
	AutoFixEnabled          bool             `json:"auto_fix_enabled"`
	AutoMergeEnabled        bool             `json:"auto_merge_enabled"`
	PromptOnReviewRequested bool             `json:"prompt_on_review_requested"`
	PromptOnMerged          bool             `json:"prompt_on_merged"`
	PromptOnClosed          bool             `json:"prompt_on_closed"`
	ReviewReviewerLogin     string           `json:"review_reviewer_login"`
	AutoFixPromptOverride   *string          `json:"auto_fix_prompt_override"`
	AutoFixMaxRounds        int              `json:"auto_fix_max_rounds"`
	EffectiveAutoFixPrompt  string           `json:"effective_auto_fix_prompt"`
	UsingDefaultPrompt      bool             `json:"using_default_prompt"`
	UpdatedAt               *time.Time       `json:"updated_at"`
	PRStates                []PRStateEntry   `json:"pr_states"`
	PROptions               []PROptionsEntry `json:"pr_options"`
}

// PRStateEntry is one linked pull request's automation state.
type PRStateEntry struct {
	RepositoryID string `json:"repository_id"`
	PRNumber     int    `json:"pr_number"`
	PRAutomationState
}

// PROptionsEntry is one linked pull request's switches.
type PROptionsEntry struct {
	TaskID       string `json:"task_id"`
	RepositoryID string `json:"repository_id"`
	PRNumber     int    `json:"pr_number"`
	PROptions
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PRAutomationUpdate is update_task_pr_automation_kandev's change: set
// fields only. RepositoryID and PRNumber, both or neither, name one linked
// pull request; without them the switches change on every pull request
// linked to the task. AutoFixPromptOverride is task-wide ("" clears it).
// Turning auto-fix on again starts its rounds over.
type PRAutomationUpdate struct {
	RepositoryID            *string
	PRNumber                *int
	AutoFixEnabled          *bool
	AutoMergeEnabled        *bool
	PromptOnReviewRequested *bool
	PromptOnMerged          *bool
	PromptOnClosed          *bool
	AutoFixPromptOverride   *string
	ReviewReviewerLogin     *string
}

// PREventState is where an entry of a pull request's event journal is.
type PREventState string

// Event journal states: pending (recorded, not yet acted on), delivering
// (claimed by a backend that is acting on it), delivered, failed (given
// up), interrupted (its backend died while acting: it is not acted on
// again, so that nothing is done twice).
const (
	EventPending     PREventState = "pending"
	EventDelivering  PREventState = "delivering"
	EventDelivered   PREventState = "delivered"
	EventFailed      PREventState = "failed"
	EventInterrupted PREventState = "interrupted"
)

// PREventStates lists the event journal states.
var PREventStates = []PREventState{EventPending, EventDelivering, EventDelivered, EventFailed, EventInterrupted}

// Valid reports whether s is a known state.
func (s PREventState) Valid() bool { return slices.Contains(PREventStates, s) }

// Bounds of an event journal entry.
const (
	MaxPREventKeyLen  = 200
	MaxPREventKindLen = 64
	MaxPREventPayload = 256 << 10 // bytes of JSON
	// MaxPREventsPerPoll bounds the entries one poll records.
	MaxPREventsPerPoll = 200
)

// PREventKeyMerged is the key of a pull request's merged event: one per
// pull request, recorded by the poll whose compare-and-set moved it to
// merged (none when a merge through Kandev moved it first).
const PREventKeyMerged = "merged"

// PREvent is one entry of a pull request's event journal: something the
// PR watcher saw (a review comment, failing checks, a merge) or decided
// (a merge to make), recorded in the transaction that records the poll
// that saw it, before anything is done about it. Key is unique per pull
// request: the same thing seen twice (by a poll and a webhook, or by two
// backends) is recorded once. Payload is the watcher's JSON.
type PREvent struct {
	ID            string          `json:"id"`
	PullRequestID string          `json:"pull_request_id"`
	Seq           int             `json:"seq"`
	Key           string          `json:"key"`
	Kind          string          `json:"kind"`
	Payload       json.RawMessage `json:"payload"`
	State         PREventState    `json:"state"`
	Attempts      int             `json:"attempts"`
	ClaimedBy     string          `json:"claimed_by,omitempty"`
	Error         string          `json:"error,omitempty"`
	// DueAt is when a pending entry is next acted on (a failed attempt
	// that will be retried waits).
	DueAt     time.Time `json:"due_at"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PullRequestService keeps a task's pull requests and their automation
// settings (implemented by the store).
type PullRequestService interface {
	// LinkPullRequest records a pull request opened for a task in one of
	// its repositories (VALIDATION_ERROR when the task is not linked to it).
	LinkPullRequest(ctx context.Context, p PullRequest) (*PullRequest, error)
	GetPullRequest(ctx context.Context, id string) (*PullRequest, error)
	// FindPullRequest returns a task's pull request by repository and
	// number (NOT_FOUND when it has none such).
	FindPullRequest(ctx context.Context, taskID, repositoryID string, number int) (*PullRequest, error)
	ListTaskPullRequests(ctx context.Context, taskID string, p Page) (*List[PullRequest], error)
	// PRAutomation returns a task's settings over its pull requests on
	// forge; NOT_FOUND when the task is missing.
	PRAutomation(ctx context.Context, taskID string, forge ForgeKind) (*PRAutomation, error)
	// UpdatePRAutomation applies u in one transaction; VALIDATION_ERROR
	// (nothing written) when u names no linked pull request of the task.
	UpdatePRAutomation(ctx context.Context, taskID string, forge ForgeKind, u PRAutomationUpdate) (*PRAutomation, error)
}
