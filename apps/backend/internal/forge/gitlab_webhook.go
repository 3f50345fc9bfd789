package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// GitLab's webhook events the watcher acts on: the X-Gitlab-Event header
// (docs.gitlab.com/user/project/integrations/webhook_events/).
const (
	GitLabMergeRequestHook = "Merge Request Hook"
	GitLabNoteHook         = "Note Hook"
	GitLabPipelineHook     = "Pipeline Hook"
)

// VerifyGitLabToken checks a webhook delivery's X-Gitlab-Token header
// against the webhook's secret token in constant time (GitLab sends the
// secret itself, not a signature:
// docs.gitlab.com/user/project/integrations/webhooks/#validate-requests-with-a-secret-token).
// UNAUTHORIZED when it is missing or does not match; the error never
// echoes the header.
func VerifyGitLabToken(secret credential.Token, header string) error {
	if secret.IsZero() {
		return newError(kanban.CodeUnavailable, "no webhook secret is configured for this forge")
	}
	if header == "" {
		return newError(kanban.CodeUnauthorized, "the webhook delivery has no X-Gitlab-Token")
	}
	// Hashes of equal length: the comparison takes the same time
	// whatever the header's length.
	got, want := sha256.Sum256([]byte(header)), sha256.Sum256([]byte(secret.Reveal()))
	if !hmac.Equal(got[:], want[:]) {
		return newError(kanban.CodeUnauthorized, "the webhook token does not match")
	}
	return nil
}

// Payload shapes: only the fields read (GitLab's webhook events page has
// them all).
type (
	glUser struct {
		Username string `json:"username"`
	}
	glAttributes struct {
		ID           int64                `json:"id"`
		IID          int                  `json:"iid"`
		Action       string               `json:"action"`
		OldRev       string               `json:"oldrev"`
		LastCommit   *struct{ ID string } `json:"last_commit"`
		Note         string               `json:"note"`
		NoteableType string               `json:"noteable_type"`
		Type         string               `json:"type"`
		System       bool                 `json:"system"`
		CommitID     string               `json:"commit_id"`
		Position     *gitlab.NotePosition `json:"position"`
		CreatedAt    string               `json:"created_at"`
		UpdatedAt    string               `json:"updated_at"`
		SHA          string               `json:"sha"`
		Status       string               `json:"status"`
		URL          string               `json:"url"`
	}
	glPayload struct {
		ObjectKind string `json:"object_kind"`
		User       glUser `json:"user"`
		Project    struct {
			PathWithNamespace string `json:"path_with_namespace"`
		} `json:"project"`
		ObjectAttributes glAttributes `json:"object_attributes"`
		MergeRequest     *struct {
			IID        int                  `json:"iid"`
			LastCommit *struct{ ID string } `json:"last_commit"`
		} `json:"merge_request"`
		Changes map[string]struct {
			Current json.RawMessage `json:"current"`
		} `json:"changes"`
		Builds []struct {
			ID           int64  `json:"id"`
			Name         string `json:"name"`
			Status       string `json:"status"`
			AllowFailure bool   `json:"allow_failure"`
		} `json:"builds"`
	}
)

// ParseGitLabEvent reads a verified delivery (X-Gitlab-Event names
// event) into the watcher's Event: a merge request's opening, closing,
// merge, new commits, draft changes, reviewers and approvals (an
// approval's Event carries no Review: the poll reads the approvals); a
// comment on a merge request's diff; a finished pipeline (Check is its
// first failed job, else the pipeline). Other deliveries give (nil, nil).
// A payload that is not the event's JSON is VALIDATION_ERROR, naming the
// event only.
func ParseGitLabEvent(event string, body []byte) (*Event, error) {
	if len(body) > MaxWebhookBody {
		return nil, newError(kanban.CodeValidation, "the webhook payload is larger than 25 MB")
	}
	switch event {
	case GitLabMergeRequestHook, GitLabNoteHook, GitLabPipelineHook:
	default:
		return nil, nil
	}
	var p glPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, newError(kanban.CodeValidation, "the webhook payload is not a valid "+event)
	}
	path := p.Project.PathWithNamespace
	i := strings.LastIndexByte(path, '/')
	ev := &Event{}
	if i > 0 {
		ev.Repo = Repo{Owner: path[:i], Name: path[i+1:]}
	}
	if _, err := projectID(ev.Repo); err != nil {
		return nil, newError(kanban.CodeValidation, "the webhook payload names no valid project")
	}
	var relevant bool
	switch event {
	case GitLabMergeRequestHook:
		relevant = glMergeRequestEvent(ev, &p)
	case GitLabNoteHook:
		relevant = glNoteEvent(ev, &p)
	case GitLabPipelineHook:
		relevant = glPipelineEvent(ev, &p)
	}
	if !relevant {
		return nil, nil
	}
	return ev, nil
}

// glMergeRequestEvent fills ev from a Merge Request Hook, reporting
// whether the delivery is one the watcher reads.
func glMergeRequestEvent(ev *Event, p *glPayload) bool {
	a := &p.ObjectAttributes
	kind, ok := mergeRequestKind(p)
	if !ok || a.IID < 1 {
		return false
	}
	ev.Kind, ev.PRs = kind, []int{a.IID}
	if a.LastCommit != nil {
		ev.HeadSHA = a.LastCommit.ID
	}
	return true
}

// glNoteEvent fills ev from a Note Hook, reporting whether the delivery
// is a comment on a merge request's diff.
func glNoteEvent(ev *Event, p *glPayload) bool {
	a := &p.ObjectAttributes
	if a.NoteableType != "MergeRequest" || p.MergeRequest == nil || p.MergeRequest.IID < 1 {
		return false
	}
	n := &gitlab.Note{ID: a.ID, Type: gitlab.NoteTypeValue(a.Type), Body: a.Note, System: a.System, Position: a.Position,
		Author: gitlab.NoteAuthor{Username: p.User.Username}, CreatedAt: hookTime(a.CreatedAt), UpdatedAt: hookTime(a.UpdatedAt)}
	c, ok := diffNote(n)
	if !ok {
		return false // not a comment on the diff
	}
	if c.CommitSHA == "" {
		c.CommitSHA = a.CommitID
	}
	ev.Kind, ev.PRs, ev.Comment = EventReviewComment, []int{p.MergeRequest.IID}, &c
	if p.MergeRequest.LastCommit != nil {
		ev.HeadSHA = p.MergeRequest.LastCommit.ID
	}
	return true
}

// glPipelineEvent fills ev from a Pipeline Hook, reporting whether the
// pipeline has finished (Check is its first failed job, else the
// pipeline).
func glPipelineEvent(ev *Event, p *glPayload) bool {
	a := &p.ObjectAttributes
	switch a.Status {
	case "success", "failed", "canceled", "skipped":
	default:
		return false // still running: the poll waits for it
	}
	ev.Kind, ev.HeadSHA = EventCheckCompleted, a.SHA
	if p.MergeRequest != nil && p.MergeRequest.IID > 0 {
		ev.PRs = []int{p.MergeRequest.IID}
	}
	ev.Check = &FailedCheck{ID: a.ID, Name: "pipeline", Kind: "pipeline", Conclusion: a.Status, URL: a.URL}
	for _, b := range p.Builds {
		if (b.Status == "failed" || b.Status == "canceled") && !b.AllowFailure {
			ev.Check = &FailedCheck{ID: b.ID, Name: boundText(b.Name, 256), Kind: "job", Conclusion: b.Status, HasLog: true}
			break
		}
	}
	return true
}

// mergeRequestKind is what a Merge Request Hook's action means.
func mergeRequestKind(p *glPayload) (EventKind, bool) {
	switch p.ObjectAttributes.Action {
	case "open":
		return EventPROpened, true
	case "reopen":
		return EventPRReopened, true
	case "close":
		return EventPRClosed, true
	case "merge":
		return EventPRMerged, true
	case "approved", "approval", "unapproved", "unapproval":
		return EventReviewSubmitted, true
	case "update":
		if p.ObjectAttributes.OldRev != "" {
			return EventPRSynchronized, true
		}
		if d, ok := p.Changes["draft"]; ok {
			if string(d.Current) == "true" {
				return EventPRDraft, true
			}
			return EventPRReady, true
		}
		if _, ok := p.Changes["reviewers"]; ok {
			return EventReviewRequested, true
		}
	}
	return "", false
}

// hookTime reads a webhook's time: RFC 3339, or the "2015-05-17 18:21:36
// UTC" form GitLab's note and pipeline events use.
func hookTime(s string) *time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05 MST", "2006-01-02 15:04:05 -0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			return &t
		}
	}
	return nil
}
