package action

import (
	"context"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/forgeconf"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// PROpenIn is the payload of task.pr.open: a pull (GitHub) or merge
// (GitLab) request from the task branch into its base branch.
type PROpenIn struct {
	TaskID       string `json:"task_id"`
	RepositoryID string `json:"repository_id,omitzero"`
	Title        string `json:"title"`
	Body         string `json:"body,omitzero"`
	Draft        bool   `json:"draft,omitzero"`
}

// PRRefIn names one pull request of a task (task.pr.get).
type PRRefIn struct {
	ID string `json:"id"`
}

// PRListIn is the payload of task.pr.list.
type PRListIn struct {
	TaskID string `json:"task_id"`
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// PRMergeIn is the payload of task.pr.merge. ExpectedHeadSHA defaults to
// the head last read: what the operator saw is what is merged.
type PRMergeIn struct {
	ID              string `json:"id"`
	Method          string `json:"method"`
	ExpectedHeadSHA string `json:"expected_head_sha,omitzero"`
	CommitTitle     string `json:"commit_title,omitzero"`
	CommitMessage   string `json:"commit_message,omitzero"`
}

var mergeMethods = []string{string(forge.MergeCommit), string(forge.MergeSquash), string(forge.MergeRebase)}

var _ = declare(Def[PROpenIn, *kanban.PullRequest]{
	Name:   kanban.ActionTaskPROpen,
	Effect: External,
	Allow:  AllowOperator,
	Schema: schema.Obj("", shipTaskProps(schema.P{
		"title": schema.Str("The pull request's title.").Len(1, kanban.MaxPRTitleLen),
		"body":  schema.Str("Its description (Markdown).").Len(1, kanban.MaxPRBodyLen),
		"draft": schema.Bool("Open it as a draft.").Default(false),
	}), "task_id", "title"),
	Run: (*Service).openPR,
})

var _ = declare(Def[PRRefIn, *kanban.PullRequest]{
	Name:   kanban.ActionTaskPRGet,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{"id": idProp("The pull request (its Kandev id).")}, "id"),
	Run:    (*Service).getPR,
})

var _ = declare(Def[PRListIn, *kanban.List[kanban.PullRequest]]{
	Name:   kanban.ActionTaskPRList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{"task_id": idProp("The task.")}), "task_id"),
	Run:    (*Service).listPRs,
})

// PRBadgesIn is the payload of task.pr.badges.
type PRBadgesIn struct {
	WorkspaceID string `json:"workspace_id"`
	Limit       int    `json:"limit,omitzero"`
	Cursor      string `json:"cursor,omitzero"`
}

// task.pr.badges: what the board's cards show of their tasks' pull
// requests, for a whole workspace in one listing (not one read per card).
var _ = declare(Def[PRBadgesIn, *kanban.List[kanban.PullRequestBadge]]{
	Name:   kanban.ActionTaskPRBadges,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{
		"workspace_id": idProp("The workspace: the pull requests of its tasks that are not archived."),
	}), "workspace_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in PRBadgesIn) (*kanban.List[kanban.PullRequestBadge], error) {
		if s.ship == nil {
			return nil, kanban.Errorf(kanban.CodeUnavailable, "commit, push and pull requests are not configured on this backend")
		}
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		return s.ship.PRs.ListPullRequestBadges(ctx, ws, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[PRMergeIn, *kanban.PullRequest]{
	Name:   kanban.ActionTaskPRMerge,
	Effect: External,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"id":                idProp("The pull request (its Kandev id)."),
		"method":            schema.Enum("How to merge.", mergeMethods...),
		"expected_head_sha": schema.Str("Merge only if the head is still this commit (default: the head last read).").Pattern(`^[0-9a-f]{40}([0-9a-f]{24})?$`),
		"commit_title":      schema.Str("Title of the merge or squash commit.").Len(1, kanban.MaxPRTitleLen),
		"commit_message":    schema.Str("Message of the merge or squash commit.").Len(1, kanban.MaxPRBodyLen),
	}, "id", "method"),
	Run: (*Service).mergePR,
})

// openPR opens a pull request of the task branch (pushed first, with
// task.push) into the task's base branch and links it to the task.
func (s *Service) openPR(ctx context.Context, p Principal, in PROpenIn) (*kanban.PullRequest, error) {
	if err := s.refuseSecrets("title", in.Title, in.Body); err != nil {
		return nil, err
	}
	_, w, err := s.shipTree(ctx, p, in.TaskID, in.RepositoryID)
	if err != nil {
		return nil, err
	}
	acct, client, err := s.forgeOf(w.repo)
	if err != nil {
		return nil, err
	}
	pr, err := client.OpenPR(ctx, acct.Repo(), forge.NewPR{Title: in.Title, Body: in.Body, Head: w.branch, Base: w.base, Draft: in.Draft})
	if err != nil {
		return nil, err
	}
	rec := recordOf(kanban.PullRequest{TaskID: w.task.ID, RepositoryID: w.repo.ID, Forge: acct.Forge(), ForgeRepo: acct.ForgeRepo()}, pr)
	out, err := s.ship.PRs.LinkPullRequest(ctx, rec)
	if err != nil {
		return nil, err
	}
	s.prUpdated(w.task, out)
	s.events.Emit(kanban.PullRequestsChanged{TaskID: out.TaskID}) // the PR watcher looks at it at once
	return out, nil
}

// getPR reads a pull request again from its forge (state, head, checks,
// reviews), records it and returns it. Found merged, the task's step's
// on_pr_merged automations run (once).
func (s *Service) getPR(ctx context.Context, p Principal, in PRRefIn) (*kanban.PullRequest, error) {
	rec, t, client, repo, err := s.prOf(ctx, p, in.ID)
	if err != nil {
		return nil, err
	}
	pr, err := client.PR(ctx, repo, rec.Number)
	if err != nil {
		return nil, err
	}
	next := recordOf(*rec, pr)
	if pr.HeadSHA != "" {
		ch, err := client.Checks(ctx, repo, pr.HeadSHA)
		if err != nil {
			return nil, err
		}
		next.Checks = kanban.ChecksState(ch.State)
	}
	rv, err := client.Reviews(ctx, repo, rec.Number, time.Time{})
	if err != nil {
		return nil, err
	}
	next.Review = combinedReview(rv, pr.RequestedReviewers)
	merged := next.State == kanban.PRMerged
	if merged {
		next.State = rec.State // moved to merged below, once
	}
	out, err := s.ship.PRs.LinkPullRequest(ctx, next)
	if err != nil {
		return nil, err
	}
	if merged {
		return s.markMerged(ctx, t, out, pr.HeadSHA)
	}
	s.prUpdated(t, out)
	return out, nil
}

// listPRs lists a task's pull requests as last recorded.
func (s *Service) listPRs(ctx context.Context, p Principal, in PRListIn) (*kanban.List[kanban.PullRequest], error) {
	if s.ship == nil {
		return nil, kanban.Errorf(kanban.CodeUnavailable, "commit, push and pull requests are not configured on this backend")
	}
	t, err := s.taskFor(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	return s.ship.PRs.ListTaskPullRequests(ctx, t.ID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
}

// mergePR merges a pull request with the operator's method, only if its
// head is still the one expected, then records it merged: the task's
// step's on_pr_merged automations run.
func (s *Service) mergePR(ctx context.Context, p Principal, in PRMergeIn) (*kanban.PullRequest, error) {
	if err := s.refuseSecrets("commit_message", in.CommitTitle, in.CommitMessage); err != nil {
		return nil, err
	}
	rec, t, client, repo, err := s.prOf(ctx, p, in.ID)
	if err != nil {
		return nil, err
	}
	if rec.State == kanban.PRMerged || rec.State == kanban.PRClosed {
		return nil, kanban.Errorf(kanban.CodeConflict, "the pull request is %s; read it again (task.pr.get) if that changed", rec.State)
	}
	head := in.ExpectedHeadSHA
	if head == "" {
		head = rec.HeadSHA
	}
	res, err := client.Merge(ctx, repo, rec.Number, forge.MergeRequest{Method: forge.MergeMethod(in.Method), ExpectedHeadSHA: head,
		CommitTitle: in.CommitTitle, CommitMessage: in.CommitMessage})
	if err != nil {
		return nil, err
	}
	if !res.Merged {
		return nil, kanban.Errorf(kanban.CodeConflict, "the forge did not merge the pull request")
	}
	return s.markMerged(ctx, t, rec, head)
}

// markMerged records a pull request merged and, when this call moved it
// there, tells the workflow engine (once per pull request).
func (s *Service) markMerged(ctx context.Context, t *kanban.Task, rec *kanban.PullRequest, head string) (*kanban.PullRequest, error) {
	out, changed, err := s.ship.PRs.MarkPullRequestMerged(ctx, rec.ID, head)
	if err != nil {
		return nil, err
	}
	s.prUpdated(t, out)
	if changed {
		s.events.Emit(kanban.PullRequestMerged{TaskID: out.TaskID, PullRequestID: out.ID})
		s.events.Emit(kanban.PullRequestStateChanged{PR: *out, Change: kanban.PRChangeMerged, Key: string(kanban.PRChangeMerged)})
	}
	return out, nil
}

// prOf resolves a pull request record, its task (in the caller's scope)
// and the forge client of its repository's account.
func (s *Service) prOf(ctx context.Context, p Principal, id string) (*kanban.PullRequest, *kanban.Task, forge.Forge, forge.Repo, error) {
	if s.ship == nil {
		return nil, nil, nil, forge.Repo{}, kanban.Errorf(kanban.CodeUnavailable, "commit, push and pull requests are not configured on this backend")
	}
	rec, err := s.ship.PRs.GetPullRequest(ctx, id)
	if err != nil {
		return nil, nil, nil, forge.Repo{}, err
	}
	t, err := s.taskFor(ctx, p, rec.TaskID)
	if err != nil {
		return nil, nil, nil, forge.Repo{}, err
	}
	repo, err := s.store.GetRepository(ctx, rec.RepositoryID)
	if err != nil {
		return nil, nil, nil, forge.Repo{}, err
	}
	acct, client, err := s.forgeOf(repo)
	if err != nil {
		return nil, nil, nil, forge.Repo{}, err
	}
	if acct.Forge() != rec.Forge || acct.ForgeRepo() != rec.ForgeRepo {
		return nil, nil, nil, forge.Repo{}, kanban.Errorf(kanban.CodeConflict, "the repository's forge account now names another forge repository than the pull request's")
	}
	return rec, t, client, acct.Repo(), nil
}

func (s *Service) forgeOf(repo *kanban.Repository) (*forgeconf.Account, forge.Forge, error) {
	acct, err := s.ship.Forges.For(repo.RemoteURL)
	if err != nil {
		return nil, nil, err
	}
	client, err := acct.Client()
	if err != nil {
		return nil, nil, err
	}
	return acct, client, nil
}

// PublishPullRequest tells a pull request's task's workspace its record
// as it is now (task.pr_updated): the PR watcher's polls change it
// outside any action. NOT_FOUND when it or its task is gone.
func (s *Service) PublishPullRequest(ctx context.Context, id string) error {
	if s.ship == nil {
		return kanban.Errorf(kanban.CodeUnavailable, "commit, push and pull requests are not configured on this backend")
	}
	pr, err := s.ship.PRs.GetPullRequest(ctx, id)
	if err != nil {
		return err
	}
	t, err := s.store.GetTask(ctx, pr.TaskID)
	if err != nil {
		return err
	}
	s.prUpdated(t, pr)
	return nil
}

// prUpdated tells the task's workspace.
func (s *Service) prUpdated(t *kanban.Task, pr *kanban.PullRequest) {
	kanban.EventPullRequestUpdated.Publish(s.pub, WorkspaceTopic(t.WorkspaceID), pr)
}

// PullRequestRead publishes task.pr_updated for a pull request the PR
// watcher read a change of (the board redraws it); a task gone since is
// skipped.
func (s *Service) PullRequestRead(ctx context.Context, pr *kanban.PullRequest) {
	t, err := s.store.GetTask(ctx, pr.TaskID)
	if err != nil {
		return
	}
	s.prUpdated(t, pr)
}

// recordOf lays what the forge said of a pull request over its record.
func recordOf(rec kanban.PullRequest, pr *forge.PR) kanban.PullRequest {
	rec.Number, rec.URL, rec.Title = pr.Number, pr.URL, boundRunes(pr.Title, kanban.MaxPRTitleLen)
	rec.HeadBranch, rec.BaseBranch, rec.HeadSHA = pr.Head, pr.Base, pr.HeadSHA
	rec.State, rec.Mergeable = kanban.PRState(pr.State), pr.Mergeable
	return rec
}

// combinedReview is the reviews' verdict: each reviewer's latest verdict
// (a dismissal withdraws it), changes requested winning over approvals;
// pending while a requested review has not come.
func combinedReview(rv *forge.Reviews, requested []string) kanban.ReviewState {
	verdict := map[string]forge.ReviewState{}
	for _, r := range rv.Items {
		switch r.State {
		case forge.ReviewApproved, forge.ReviewChangesRequested:
			verdict[r.Author] = r.State
		case forge.ReviewDismissed:
			delete(verdict, r.Author)
		}
	}
	out := kanban.ReviewNone
	if len(requested) > 0 {
		out = kanban.ReviewPending
	}
	for _, v := range verdict {
		if v == forge.ReviewChangesRequested {
			return kanban.ReviewChangesRequested
		}
		out = kanban.ReviewApproved
	}
	return out
}

func boundRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}
