package prwatch

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Kind is what an Event tells of.
type Kind string

// Event kinds. kindMerge is the watcher's own decision (a merge it makes
// itself); it never reaches the Sink.
const (
	ReviewCommented Kind = "review_comment"   // a new comment on lines of the diff
	ReviewSubmitted Kind = "review_submitted" // a review, with its verdict
	ReviewRequested Kind = "review_requested" // a reviewer was requested
	ChecksFailing   Kind = "checks_failing"   // the head's checks finished, some failed
	ChecksPassing   Kind = "checks_passing"   // the head's checks finished, all passed
	Merged          Kind = "merged"
	Closed          Kind = "closed" // closed without merging
	kindMerge       Kind = "merge"
)

// Automation reasons of a Prompt.
const (
	ReasonAutoFix         = "auto_fix"
	ReasonReviewRequested = "review_requested"
	ReasonMerged          = "merged"
	ReasonClosed          = "closed"
	// ReasonReview: a reviewer's comment or review (ReviewPrompt).
	ReasonReview = "review"
)

// Event is something the watcher saw on a watched pull request, with the
// automation's decision about it. The same event is delivered once, under
// one ID (its journal entry's).
type Event struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// PR is the pull request as it is recorded when the event is delivered.
	PR      kanban.PullRequest `json:"pr"`
	HeadSHA string             `json:"head_sha,omitempty"`
	// Review (ReviewSubmitted), Comment (ReviewCommented), Reviewer
	// (ReviewRequested: the login) and Check (ChecksFailing: the first
	// failing check) are what the event is about; each text is bounded.
	Review   *forge.Review        `json:"review,omitempty"`
	Comment  *forge.ReviewComment `json:"comment,omitempty"`
	Reviewer string               `json:"reviewer,omitempty"`
	Check    *Check               `json:"check,omitempty"`
	// Prompt, when set, is what the PR automation sends the task's agent.
	Prompt *Prompt `json:"prompt,omitempty"`
}

// Check is a failed check and the end of its log.
type Check struct {
	ID         int64  `json:"id,omitempty"`
	Name       string `json:"name"`
	Conclusion string `json:"conclusion"`
	URL        string `json:"url,omitempty"`
	// Excerpt is the end of its log (or its own summary when it has no
	// log), at most kanban.MaxAutoFixExcerpt bytes; Truncated says more
	// came before.
	Excerpt   string `json:"excerpt,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// Failing names the other failing checks (at most 20).
	Failing []string `json:"failing,omitempty"`
}

// Prompt is a prompt for the task's agent: its text (at most
// kanban.MaxPromptLen) and why it is sent (a Reason… constant).
type Prompt struct {
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

// Sink receives the watcher's events: the wiring implements it (the step
// event on_comment, a prompt queued for the task's agent, moving the task
// on merge). Deliver is called once per event, events of one pull request
// in the order they were seen. It returns nil when it acted; an error
// when it did nothing, and the event is delivered again later (at most
// Config.MaxAttempts times). A backend that dies during Deliver leaves
// the event interrupted: it is not delivered again, so a prompt is never
// sent twice.
type Sink interface {
	Deliver(ctx context.Context, e Event) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, e Event) error

// Deliver calls f.
func (f SinkFunc) Deliver(ctx context.Context, e Event) error { return f(ctx, e) }

// payload is what a journal entry keeps of an event (the pull request is
// read again when it is delivered).
type payload struct {
	HeadSHA  string               `json:"head_sha,omitempty"`
	Review   *forge.Review        `json:"review,omitempty"`
	Comment  *forge.ReviewComment `json:"comment,omitempty"`
	Reviewer string               `json:"reviewer,omitempty"`
	Check    *Check               `json:"check,omitempty"`
	Prompt   *Prompt              `json:"prompt,omitempty"`
	Merge    *mergePlan           `json:"merge,omitempty"`
}

// mergePlan is a merge the automation decided.
type mergePlan struct {
	SHA    string            `json:"sha"`
	Method forge.MergeMethod `json:"method"`
}

// entry makes a journal entry of kind under key.
func entry(kind Kind, key string, p payload) kanban.PREvent {
	b, err := json.Marshal(p)
	if err != nil { // only strings, ints and bools: cannot fail
		panic(fmt.Sprintf("prwatch: encode %s: %v", kind, err))
	}
	return kanban.PREvent{Key: key, Kind: string(kind), Payload: b}
}

// eventOf is the Event of a journal entry of pr.
func eventOf(e kanban.PREvent, pr kanban.PullRequest) (Event, payload, error) {
	var p payload
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		return Event{}, p, fmt.Errorf("journal entry %s: %w", e.ID, err)
	}
	return Event{ID: e.ID, Kind: Kind(e.Kind), PR: pr, HeadSHA: p.HeadSHA, Review: p.Review, Comment: p.Comment,
		Reviewer: p.Reviewer, Check: p.Check, Prompt: p.Prompt}, p, nil
}
