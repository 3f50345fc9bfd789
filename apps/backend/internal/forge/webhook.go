package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// MaxWebhookBody is the largest webhook payload read (GitHub caps its
// payloads at 25 MB).
const MaxWebhookBody = 25 << 20

// VerifyGitHubSignature checks a webhook delivery's X-Hub-Signature-256
// header ("sha256=" and the hex HMAC-SHA256 of the raw body under the
// webhook's secret) in constant time. UNAUTHORIZED when it is missing or
// does not match; the error never echoes the header or the body.
func VerifyGitHubSignature(secret credential.Token, body []byte, header string) error {
	if secret.IsZero() {
		return newError(kanban.CodeUnavailable, "no webhook secret is configured for this forge")
	}
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	got, err := hex.DecodeString(hexSig)
	if !ok || err != nil || len(got) != sha256.Size {
		return newError(kanban.CodeUnauthorized, "the webhook delivery has no valid X-Hub-Signature-256")
	}
	mac := hmac.New(sha256.New, []byte(secret.Reveal()))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return newError(kanban.CodeUnauthorized, "the webhook signature does not match")
	}
	return nil
}

// EventKind is what a webhook delivery means to the PR watcher.
type EventKind string

// Event kinds.
const (
	EventPROpened        EventKind = "pr_opened"
	EventPRReopened      EventKind = "pr_reopened"
	EventPRClosed        EventKind = "pr_closed" // closed without merging
	EventPRMerged        EventKind = "pr_merged"
	EventPRSynchronized  EventKind = "pr_synchronized" // a new head commit
	EventPRReady         EventKind = "pr_ready_for_review"
	EventPRDraft         EventKind = "pr_converted_to_draft"
	EventReviewRequested EventKind = "review_requested"
	EventReviewSubmitted EventKind = "review_submitted"
	EventReviewComment   EventKind = "review_comment"
	EventCheckCompleted  EventKind = "check_completed"
	EventStatus          EventKind = "status"
)

// Event is a webhook delivery reduced to what the watcher acts on. PRs
// lists the pull requests it concerns (a check run may name several; a
// commit status names none: match it by HeadSHA).
type Event struct {
	Kind    EventKind      `json:"kind"`
	Repo    Repo           `json:"repo"`
	PRs     []int          `json:"prs,omitempty"`
	HeadSHA string         `json:"head_sha,omitempty"`
	Review  *Review        `json:"review,omitempty"`
	Comment *ReviewComment `json:"comment,omitempty"`
	// Check is the completed check run, or the commit status, with its
	// conclusion (or state).
	Check *FailedCheck `json:"check,omitempty"`
}

// Payload shapes: only the fields read (GitHub's webhook schemas,
// @octokit/openapi-webhooks, have them all).
type (
	ghRepo struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	}
	ghUser struct {
		Login string `json:"login"`
	}
	ghPR struct {
		Number int  `json:"number"`
		Merged bool `json:"merged"`
		Head   struct {
			SHA string `json:"sha"`
		} `json:"head"`
	}
	ghPayload struct {
		Action      string  `json:"action"`
		Repository  ghRepo  `json:"repository"`
		PullRequest *ghPR   `json:"pull_request"`
		SHA         string  `json:"sha"`         // status
		State       string  `json:"state"`       // status
		Context     string  `json:"context"`     // status
		Description *string `json:"description"` // status
		TargetURL   *string `json:"target_url"`  // status
		Review      *struct {
			ID          int64     `json:"id"`
			User        ghUser    `json:"user"`
			State       string    `json:"state"`
			Body        *string   `json:"body"`
			CommitID    string    `json:"commit_id"`
			SubmittedAt time.Time `json:"submitted_at"`
		} `json:"review"`
		Comment *struct {
			ID        int64     `json:"id"`
			ReviewID  int64     `json:"pull_request_review_id"`
			InReplyTo int64     `json:"in_reply_to_id"`
			User      ghUser    `json:"user"`
			Body      string    `json:"body"`
			Path      string    `json:"path"`
			Line      *int      `json:"line"`
			StartLine *int      `json:"start_line"`
			Side      string    `json:"side"`
			CommitID  string    `json:"commit_id"`
			CreatedAt time.Time `json:"created_at"`
			UpdatedAt time.Time `json:"updated_at"`
			HTMLURL   string    `json:"html_url"`
		} `json:"comment"`
		CheckRun *struct {
			ID         int64   `json:"id"`
			Name       string  `json:"name"`
			HeadSHA    string  `json:"head_sha"`
			Conclusion *string `json:"conclusion"`
			DetailsURL *string `json:"details_url"`
			App        *struct {
				Slug string `json:"slug"`
			} `json:"app"`
			PullRequests []struct {
				Number int `json:"number"`
			} `json:"pull_requests"`
		} `json:"check_run"`
	}
)

// ParseGitHubEvent reads a verified delivery (X-GitHub-Event names event).
// Deliveries the watcher does not act on (other events, other actions,
// ping) give (nil, nil). A payload that is not the event's JSON is
// VALIDATION_ERROR, naming the event only.
func ParseGitHubEvent(event string, body []byte) (*Event, error) {
	if len(body) > MaxWebhookBody {
		return nil, newError(kanban.CodeValidation, "the webhook payload is larger than 25 MB")
	}
	switch event {
	case "pull_request", "pull_request_review", "pull_request_review_comment", "check_run", "status":
	default:
		return nil, nil
	}
	var p ghPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, newError(kanban.CodeValidation, "the webhook payload is not a valid "+event+" event")
	}
	ev := &Event{Repo: Repo{Owner: p.Repository.Owner.Login, Name: p.Repository.Name}}
	if err := checkRepo(ev.Repo); err != nil {
		return nil, newError(kanban.CodeValidation, "the webhook payload names no valid repository")
	}
	if p.PullRequest != nil {
		ev.PRs, ev.HeadSHA = []int{p.PullRequest.Number}, p.PullRequest.Head.SHA
	}
	kind, ok := eventKind(event, &p)
	if !ok {
		return nil, nil
	}
	ev.Kind = kind
	switch {
	case event == "pull_request_review" && p.Review != nil:
		r := p.Review
		ev.Review = &Review{ID: r.ID, Author: r.User.Login, State: reviewState(r.State), Body: boundText(deref(r.Body), MaxTextBytes),
			CommitSHA: r.CommitID, SubmittedAt: r.SubmittedAt}
	case event == "pull_request_review_comment" && p.Comment != nil:
		c := p.Comment
		ev.Comment = &ReviewComment{ID: c.ID, ReviewID: c.ReviewID, InReplyTo: c.InReplyTo, Author: c.User.Login,
			Body: boundText(c.Body, MaxTextBytes), Path: c.Path, Line: derefInt(c.Line), StartLine: derefInt(c.StartLine), Side: c.Side,
			CommitSHA: c.CommitID, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, URL: c.HTMLURL}
	case event == "check_run" && p.CheckRun != nil:
		c := p.CheckRun
		ev.HeadSHA = c.HeadSHA
		for _, pr := range c.PullRequests {
			ev.PRs = append(ev.PRs, pr.Number)
		}
		ev.Check = &FailedCheck{ID: c.ID, Name: boundText(c.Name, 256), Kind: "check_run", Conclusion: deref(c.Conclusion),
			URL: deref(c.DetailsURL), HasLog: c.App != nil && c.App.Slug == "github-actions"}
	case event == "status":
		ev.HeadSHA = p.SHA
		ev.Check = &FailedCheck{Name: boundText(p.Context, 256), Kind: "status", Conclusion: p.State,
			Summary: boundText(deref(p.Description), MaxTextBytes), URL: deref(p.TargetURL)}
	}
	return ev, nil
}

func eventKind(event string, p *ghPayload) (EventKind, bool) {
	switch event {
	case "pull_request":
		switch p.Action {
		case "opened":
			return EventPROpened, true
		case "reopened":
			return EventPRReopened, true
		case "closed":
			if p.PullRequest != nil && p.PullRequest.Merged {
				return EventPRMerged, true
			}
			return EventPRClosed, true
		case "synchronize":
			return EventPRSynchronized, true
		case "ready_for_review":
			return EventPRReady, true
		case "converted_to_draft":
			return EventPRDraft, true
		case "review_requested":
			return EventReviewRequested, true
		}
	case "pull_request_review":
		return EventReviewSubmitted, p.Action == "submitted"
	case "pull_request_review_comment":
		return EventReviewComment, p.Action == "created" || p.Action == "edited"
	case "check_run":
		return EventCheckCompleted, p.Action == "completed"
	case "status":
		return EventStatus, true
	}
	return "", false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}
