package prwatch

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Webhook returns the handler of a GitHub webhook signed with secret
// (its X-Hub-Signature-256 checked in constant time before anything else
// is read): a review or a review comment it tells of is recorded as the
// poll would record it (under the same key: once, whichever sees it
// first), and every delivery about a watched pull request makes it due
// at once, so that a poll — with conditional requests — reads what the
// delivery says changed (checks, a merge, a close, a review request).
//
// It answers 202 when the delivery is taken (also when it concerns no
// watched pull request, or an event the watcher does not act on), 401 for
// a missing or forged signature, 413 for a body over
// forge.MaxWebhookBody, 400 for a payload that is not its event's JSON,
// 405 for a method other than POST, 503 without a secret or while
// maxWebhookReads deliveries are being read (GitHub redelivers). Answers
// never echo the delivery.
func (w *Watcher) Webhook(secret Secret) http.Handler {
	return w.webhook(hook{
		forge: kanban.ForgeGitHub,
		verify: func(r *http.Request, body []byte) error {
			tok, err := w.secretOf(kanban.ForgeGitHub, secret)
			if err != nil {
				return err
			}
			return forge.VerifyGitHubSignature(tok, body, r.Header.Get("X-Hub-Signature-256"))
		},
		parse: func(r *http.Request, body []byte) (*forge.Event, error) {
			return forge.ParseGitHubEvent(r.Header.Get("X-GitHub-Event"), body)
		},
	})
}

// GitLabWebhook returns the handler of a GitLab webhook whose secret
// token is secret: its X-Gitlab-Token is checked in constant time before
// the body is read (GitLab sends the token, not a signature of the
// body), then the delivery is taken as Webhook takes GitHub's — a diff
// note recorded as the poll records it, every delivery about a watched
// merge request making it due. Answers as Webhook's.
func (w *Watcher) GitLabWebhook(secret Secret) http.Handler {
	return w.webhook(hook{
		forge: kanban.ForgeGitLab,
		preVerify: func(r *http.Request) error {
			tok, err := w.secretOf(kanban.ForgeGitLab, secret)
			if err != nil {
				return err
			}
			return forge.VerifyGitLabToken(tok, r.Header.Get("X-Gitlab-Token"))
		},
		parse: func(r *http.Request, body []byte) (*forge.Event, error) {
			return forge.ParseGitLabEvent(r.Header.Get("X-Gitlab-Event"), body)
		},
	})
}

// Secret returns a webhook's secret as it is now: it is asked on every
// delivery, so that a rotated secret file is taken without a restart
// (credential.Cached reads the file again only when it changed).
type Secret func() (credential.Token, error)

// Static is the Secret of a fixed token.
func Static(t credential.Token) Secret { return func() (credential.Token, error) { return t, nil } }

// secretOf loads a delivery's secret: UNAVAILABLE (503: the forge may
// redeliver once the operator fixed the file) when it cannot be loaded,
// logged without the source's error text reaching the sender.
func (w *Watcher) secretOf(kind kanban.ForgeKind, secret Secret) (credential.Token, error) {
	tok, err := secret()
	if err != nil {
		w.log.Error("prwatch: the webhook secret cannot be loaded", "forge", kind, "err", err)
		return credential.Token{}, kanban.Errorf(kanban.CodeUnavailable, "the webhook secret cannot be loaded; the server log says why")
	}
	return tok, nil
}

// hook is how one forge's deliveries are checked and read.
type hook struct {
	forge kanban.ForgeKind
	// preVerify checks a delivery before its body is read; verify after.
	preVerify func(r *http.Request) error
	verify    func(r *http.Request, body []byte) error
	parse     func(r *http.Request, body []byte) (*forge.Event, error)
}

func (w *Watcher) webhook(h hook) http.Handler {
	refuse := func(rw http.ResponseWriter, err error) {
		status := http.StatusUnauthorized
		if kanban.ErrorCode(err) == kanban.CodeUnavailable {
			status = http.StatusServiceUnavailable
		}
		http.Error(rw, err.Error(), status)
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			rw.Header().Set("Allow", http.MethodPost)
			http.Error(rw, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if h.preVerify != nil {
			if err := h.preVerify(r); err != nil {
				refuse(rw, err)
				return
			}
		}
		select { // an unverified body may be 25 MB: a few at a time
		case w.webhookReads <- struct{}{}:
			defer func() { <-w.webhookReads }()
		default:
			http.Error(rw, "too many deliveries at once; redeliver later", http.StatusServiceUnavailable)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, forge.MaxWebhookBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(rw, "the delivery is larger than "+strconv.Itoa(forge.MaxWebhookBody)+" bytes", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(rw, "the delivery could not be read", http.StatusBadRequest)
			return
		}
		if h.verify != nil {
			if err := h.verify(r, body); err != nil {
				refuse(rw, err)
				return
			}
		}
		ev, err := h.parse(r, body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		if ev != nil {
			if err := w.take(r, h.forge, ev); err != nil {
				w.log.Error("prwatch: webhook delivery", "forge", h.forge, "event", ev.Kind, "err", err)
				http.Error(rw, "the delivery could not be recorded; redeliver it", http.StatusServiceUnavailable)
				return
			}
		}
		rw.WriteHeader(http.StatusAccepted)
	})
}

// take records what a verified delivery tells of each watched pull
// request of forge f it names and makes them due.
func (w *Watcher) take(r *http.Request, f kanban.ForgeKind, ev *forge.Event) error {
	ctx := r.Context()
	prs, err := w.cfg.Store.WatchedPullRequests(ctx, f, ev.Repo.Owner+"/"+ev.Repo.Name, ev.PRs, ev.HeadSHA)
	if err != nil {
		return err
	}
	for _, pr := range prs {
		var events []kanban.PREvent
		switch {
		case ev.Kind == forge.EventReviewSubmitted && ev.Review != nil && ev.Review.State != forge.ReviewPending:
			rv := *ev.Review
			events = append(events, entry(ReviewSubmitted, "review:"+strconv.FormatInt(rv.ID, 10), payload{HeadSHA: pr.HeadSHA, Review: &rv}))
		case ev.Kind == forge.EventReviewComment && ev.Comment != nil && ev.Comment.ID > pr.Watch.LastCommentID:
			c := *ev.Comment
			events = append(events, entry(ReviewCommented, "comment:"+strconv.FormatInt(c.ID, 10), payload{HeadSHA: pr.HeadSHA, Comment: &c}))
		}
		if _, err := w.cfg.Store.AddPREvents(ctx, pr.ID, events, true); err != nil {
			return err
		}
	}
	if len(prs) > 0 {
		w.Wake()
	}
	return nil
}
