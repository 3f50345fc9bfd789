package action

import (
	"context"
	"errors"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/forgeconf"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// Commit, push and pull requests of a task's worktree. Operator only: the
// reference product gives agents no such tools (an agent commits with its
// own git, in its own worktree), and each of these uses the server's forge
// token. The push URL, the token and the forge all come from the server's
// forges file (forgeconf), selected by the task's repository's remote_url;
// no payload names a URL or a credential.

// Ship is what the commit, push and pull request actions are made with.
type Ship struct {
	Forges *forgeconf.Set
	PRs    PRStore
}

// PRStore is the store of a task's pull requests (*store.Store).
type PRStore interface {
	LinkPullRequest(ctx context.Context, p kanban.PullRequest) (*kanban.PullRequest, error)
	GetPullRequest(ctx context.Context, id string) (*kanban.PullRequest, error)
	ListTaskPullRequests(ctx context.Context, taskID string, p kanban.Page) (*kanban.List[kanban.PullRequest], error)
	ListPullRequestBadges(ctx context.Context, workspaceID string, p kanban.Page) (*kanban.List[kanban.PullRequestBadge], error)
	MarkPullRequestMerged(ctx context.Context, id, headSHA string) (*kanban.PullRequest, bool, error)
}

// CommitIn is the payload of task.commit.
type CommitIn struct {
	TaskID       string   `json:"task_id"`
	RepositoryID string   `json:"repository_id,omitzero"`
	Message      string   `json:"message,omitzero"`
	Paths        []string `json:"paths,omitzero"`
	// MessageFromAgent: the task's agent writes the message (see
	// agentCommitMessage), guided by Instructions, within WaitSeconds.
	MessageFromAgent bool   `json:"message_from_agent,omitzero"`
	Instructions     string `json:"instructions,omitzero"`
	WaitSeconds      int    `json:"wait_seconds,omitzero"`
}

// CommitOut is the result of task.commit.
type CommitOut struct {
	RepositoryID string           `json:"repository_id"`
	Branch       string           `json:"branch"`
	Commit       *worktree.Commit `json:"commit"`
	// MessageFrom is who wrote the message: "operator" or "agent".
	MessageFrom string `json:"message_from"`
}

// PushIn is the payload of task.push: which task's branch; the remote is
// the repository's configured one.
type PushIn struct {
	TaskID       string `json:"task_id"`
	RepositoryID string `json:"repository_id,omitzero"`
}

// PushOut is the result of task.push.
type PushOut struct {
	RepositoryID string `json:"repository_id"`
	worktree.PushResult
}

func shipTaskProps(p schema.P) schema.P {
	p["task_id"] = idProp("The task.")
	p["repository_id"] = idProp("The task's repository (default: the one its worktree is of).")
	return p
}

var _ = declare(Def[CommitIn, *CommitOut]{
	Name:   kanban.ActionTaskCommit,
	Effect: External,
	Allow:  AllowOperator,
	Schema: schema.Obj("", shipTaskProps(schema.P{
		"message": schema.Str("The commit message (or message_from_agent).").Len(1, kanban.MaxCommitMessageBytes),
		"paths": schema.Arr("Only these paths (a rename is its old and new path); default every change.",
			schema.Str("A path relative to the worktree.").Len(1, kanban.MaxPathLen)).Items(1, kanban.MaxCommitPaths),
		"message_from_agent": schema.Bool("The task's live agent writes the message: it gets the changes in a prompt and its answer is committed."),
		"instructions":       schema.Str("With message_from_agent: what the message should say or follow.").Len(1, kanban.MaxCommitInstructionsLen),
		"wait_seconds": schema.Int("With message_from_agent: how long to wait for the agent's answer.").
			Range(1, kanban.MaxCommitMessageWait).Default(kanban.DefaultCommitMessageWait),
	}), "task_id"),
	Run: (*Service).commitTask,
})

var _ = declare(Def[PushIn, *PushOut]{
	Name:   kanban.ActionTaskPush,
	Effect: External,
	Allow:  AllowOperator,
	Schema: schema.Obj("", shipTaskProps(schema.P{}), "task_id"),
	Run:    (*Service).pushTask,
})

// commitTask commits all or the chosen changes of the task's worktree on
// its branch, as the server's commit identity.
func (s *Service) commitTask(ctx context.Context, p Principal, in CommitIn) (*CommitOut, error) {
	if err := checkCommitMessageSource(in); err != nil {
		return nil, err
	}
	if err := s.refuseSecrets("message", in.Message, in.Instructions); err != nil {
		return nil, err
	}
	tree, w, err := s.shipTree(ctx, p, in.TaskID, in.RepositoryID)
	if err != nil {
		return nil, err
	}
	msg, from := in.Message, "operator"
	if in.MessageFromAgent {
		if msg, err = s.agentCommitMessage(ctx, in.TaskID, tree, in); err != nil {
			return nil, err
		}
		if err := s.refuseSecrets("message", msg); err != nil {
			return nil, kanban.Errorf(kanban.CodeUnavailable, "the agent's commit message holds a server credential; nothing was committed")
		}
		from = "agent"
	}
	c, err := tree.Commit(ctx, worktree.CommitRequest{Message: msg, Paths: in.Paths})
	if err != nil {
		return nil, s.gitError("commit", err)
	}
	return &CommitOut{RepositoryID: w.repo.ID, Branch: w.branch, Commit: c, MessageFrom: from}, nil
}

// pushTask pushes the task branch to the repository's configured remote
// with its server-side token.
func (s *Service) pushTask(ctx context.Context, p Principal, in PushIn) (*PushOut, error) {
	tree, w, err := s.shipTree(ctx, p, in.TaskID, in.RepositoryID)
	if err != nil {
		return nil, err
	}
	acct, err := s.ship.Forges.For(w.repo.RemoteURL)
	if err != nil {
		return nil, err
	}
	remote, err := acct.Remote()
	if err != nil {
		return nil, err
	}
	res, err := tree.Push(ctx, remote)
	if err != nil {
		return nil, s.gitError("push", err)
	}
	return &PushOut{RepositoryID: w.repo.ID, PushResult: *res}, nil
}

// gitError logs a worktree failure's redacted git output (never shown to
// the caller) and returns the error, whose text is safe.
func (s *Service) gitError(op string, err error) error {
	var we *worktree.Error
	if errors.As(err, &we) && we.Detail() != "" {
		s.log.Warn("git "+op+" failed", "code", we.Safe.Code, "detail", redactAll(s.ship.Forges.Tokens(), we.Detail()))
	}
	return err
}

func redactAll(secrets []string, text string) string {
	for _, v := range secrets {
		text = strings.ReplaceAll(text, v, "[redacted]")
	}
	return text
}

// refuseSecrets refuses text that holds a configured forge token: it
// would be stored in the repository's history or on the forge, and pushed.
func (s *Service) refuseSecrets(field string, texts ...string) error {
	if s.ship == nil {
		return nil
	}
	for _, tok := range s.ship.Forges.Tokens() {
		for _, t := range texts {
			if tok != "" && strings.Contains(t, tok) {
				return kanban.FieldError(field, "contains a server credential (a configured forge token); refusing to write it where it would be pushed")
			}
		}
	}
	return nil
}

// shipWork is a task's worktree as the server knows it.
type shipWork struct {
	task   *kanban.Task // the task whose worktree it is (t, or the ancestor it shares)
	repo   *kanban.Repository
	base   string
	branch string
}

// shipTree opens the worktree of task taskID in repository repoID (or
// its only worktree when not given) the way the changes actions do
// (openLink). Only a task with a worktree of its own (exec-worktree) is
// committed to or pushed: a checkout's current branch is the operator's,
// not the task's.
func (s *Service) shipTree(ctx context.Context, p Principal, taskID, repoID string) (*worktree.Tree, *shipWork, error) {
	if s.ship == nil {
		return nil, nil, kanban.Errorf(kanban.CodeUnavailable, "commit, push and pull requests are not configured on this backend")
	}
	t, err := s.taskFor(ctx, p, taskID)
	if err != nil {
		return nil, nil, err
	}
	owner, links, err := s.taskLinks(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	link, err := s.worktreeLink(ctx, owner.ID, links, repoID)
	if err != nil {
		return nil, nil, err
	}
	rt, err := s.openLink(ctx, owner, link)
	if err != nil {
		return nil, nil, err
	}
	if rt.branch == "" { // the worktree moved to another repository meanwhile
		return nil, nil, kanban.Errorf(kanban.CodeConflict, "the task has no git worktree of its own for this repository")
	}
	return rt.tree, &shipWork{task: owner, repo: rt.repo, base: rt.base, branch: rt.branch}, nil
}

// worktreeLink returns the link of the repository whose worktree of task
// ownerID repoID names (or of its only worktree when repoID is empty).
func (s *Service) worktreeLink(ctx context.Context, ownerID string, links []kanban.TaskRepository, repoID string) (kanban.TaskRepository, error) {
	wts, err := s.store.ListWorktrees(ctx, ownerID)
	if err != nil {
		return kanban.TaskRepository{}, err
	}
	switch {
	case len(wts) == 0:
		return kanban.TaskRepository{}, kanban.Errorf(kanban.CodeConflict, "the task has no git worktree of its own yet (it gets one when an exec-worktree session starts)")
	case repoID == "" && len(wts) > 1:
		return kanban.TaskRepository{}, kanban.FieldError("repository_id", "is required: the task has a worktree in several repositories")
	case repoID == "":
		repoID = wts[0].RepositoryID
	}
	for _, wt := range wts {
		if wt.RepositoryID == repoID {
			return pickLink(links, repoID)
		}
	}
	return kanban.TaskRepository{}, kanban.FieldError("repository_id", "is not a repository the task has a worktree of")
}
