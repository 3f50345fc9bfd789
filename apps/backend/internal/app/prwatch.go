package app

import (
	"context"
	"fmt"
	"net/http"

	forgesecret "github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/prwatch"
)

// The PR watcher of a backend: it polls the open pull requests of tasks
// through the forge accounts of the forges file (the ones push and pull
// requests use: loadForges) and takes the
// forges' webhooks, and its events reach the task's agent and the
// workflow engine through prSink. It runs with the backend's lifetime.

// webhookPaths are the routes forges deliver to, per forge.
var webhookPaths = map[kanban.ForgeKind]string{kanban.ForgeGitHub: "/webhooks/github", kanban.ForgeGitLab: "/webhooks/gitlab"}

// newPRWatch builds the watcher (after the action layer and the engine:
// its sink uses both), checks the webhook secrets load and makes a change of a
// task's switches wake it.
func (b *backend) newPRWatch(cfg Config) error {
	fc := b.forges.Watch()
	w, err := prwatch.New(prwatch.Config{
		Store: b.store,
		Forges: prwatch.ForgesFunc(func(_ context.Context, pr kanban.PullRequest) (forge.Forge, error) {
			return b.forges.Client(pr.Forge, pr.ForgeRepo)
		}),
		Sink:        &prSink{svc: b.svc, events: b.events, log: cfg.Logger},
		Events:      b.events,
		Backend:     b.shared.id,
		Log:         cfg.Logger,
		Interval:    fc.PollInterval,
		MergeMethod: fc.MergeMethod,
		BackendTTL:  b.shared.ttl,
	})
	if err != nil {
		return err
	}
	b.prw = w
	b.webhooks = map[kanban.ForgeKind]http.Handler{}
	for k, src := range fc.Webhooks {
		// Loaded now to refuse a broken secret at start, then again on
		// each delivery (re-read when the file changed: rotation needs no
		// restart).
		cached := forgesecret.NewCached(src) // (app has its own type credential)
		if _, err := cached.Load(); err != nil {
			return fmt.Errorf("forges: webhooks.%s: %w", k, err)
		}
		if k == kanban.ForgeGitLab {
			b.webhooks[k] = w.GitLabWebhook(cached.Load)
		} else {
			b.webhooks[k] = w.Webhook(cached.Load)
		}
	}
	b.events.React(func(ev kanban.DomainEvent) {
		switch ev := ev.(type) {
		case kanban.PullRequestsChanged:
			w.Wake()
		case kanban.PullRequestPolled: // the board's badges and the task's list redraw
			if err := b.svc.PublishPullRequest(b.life.ctx, ev.PullRequestID); err != nil && kanban.ErrorCode(err) != kanban.CodeNotFound {
				cfg.Logger.Warn("prwatch: publish a polled pull request", "pr", ev.PullRequestID, "err", err)
			}
		}
	})
	return nil
}

// mountWebhooks mounts the webhook route of each forge with a secret:
// the delivery's signature (GitHub) or token (GitLab) is checked before
// anything is recorded. Forges deliver from elsewhere: no same-machine
// check, the secret is the authentication.
func (b *backend) mountWebhooks(mux *http.ServeMux) {
	for k, h := range b.webhooks {
		mux.Handle(webhookPaths[k], h)
	}
}

// runPRWatch runs the watcher until the backend stops; its stop waits
// for the polls and deliveries in flight (each ends with the base
// context), within the shutdown bound.
func (b *backend) runPRWatch() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.prw.Run(b.life.ctx)
	}()
	b.life.push("prwatch", func(ctx context.Context) error {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("the PR watcher did not stop in time")
		}
	})
}
