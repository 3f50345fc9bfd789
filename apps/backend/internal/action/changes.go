package action

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// ChangesIn is the payload of task.changes.list and task.changes.commits.
type ChangesIn struct {
	TaskID       string `json:"task_id,omitzero"`
	RepositoryID string `json:"repository_id,omitzero"`
	Limit        int    `json:"limit,omitzero"`
	Cursor       string `json:"cursor,omitzero"`
}

// TreeRef says which directory and branches a result was read from.
type TreeRef struct {
	TaskID       string `json:"task_id"`
	RepositoryID string `json:"repository_id"`
	BaseBranch   string `json:"base_branch"`
	Branch       string `json:"branch"`
}

// ChangesOut is the result of task.changes.list: one page of the changed
// files of one repository against the merge-base with its base branch.
type ChangesOut struct {
	TreeRef
	*worktree.Changes
}

// CommitsOut is the result of task.changes.commits.
type CommitsOut struct {
	TreeRef
	*kanban.List[worktree.Commit]
}

// DiffIn is the payload of task.changes.diff.
type DiffIn struct {
	TaskID       string `json:"task_id,omitzero"`
	RepositoryID string `json:"repository_id,omitzero"`
	Path         string `json:"path,omitzero"`
	OldPath      string `json:"old_path,omitzero"`
}

// DiffOut is the result of task.changes.diff.
type DiffOut struct {
	TreeRef
	*worktree.FileDiff
}

// SummaryIn is the payload of task.changes.summary.
type SummaryIn struct {
	TaskID string `json:"task_id,omitzero"`
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

// RepoChanges sums up one repository of a task: its totals, or why they
// cannot be read (Error: the safe message; e.g. no agent worked there yet).
type RepoChanges struct {
	TreeRef
	Name      string `json:"name"`
	MergeBase string `json:"merge_base,omitempty"`
	Head      string `json:"head,omitempty"`
	Total     int    `json:"total"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Error     string `json:"error,omitempty"`
}

// taskChangesProps are the properties naming a task's repository.
func taskChangesProps(p schema.P) schema.P {
	p["task_id"] = ownTaskRef("The task")
	p["repository_id"] = idProp("One of the task's repositories; may be omitted when it has exactly one.")
	return p
}

var _ = declare(Def[SummaryIn, *kanban.List[RepoChanges]]{
	Name:   kanban.ActionTaskChangesSummary,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{"task_id": ownTaskRef("The task")})),
	Run:    (*Service).changesSummary,
})

var _ = declare(Def[ChangesIn, *ChangesOut]{
	Name:   kanban.ActionTaskChangesList,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(taskChangesProps(schema.P{}))),
	Run:    (*Service).changesList,
})

var _ = declare(Def[DiffIn, *DiffOut]{
	Name:   kanban.ActionTaskChangesDiff,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", taskChangesProps(schema.P{
		"path":     schema.Str("The changed file, relative to the repository's root.").Len(1, kanban.MaxPathLen),
		"old_path": schema.Str("For a renamed file, its path before the rename (its change's old_path).").Len(1, kanban.MaxPathLen),
	}), "path"),
	Run: (*Service).changesDiff,
})

var _ = declare(Def[ChangesIn, *CommitsOut]{
	Name:   kanban.ActionTaskChangesCommits,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(taskChangesProps(schema.P{}))),
	Run:    (*Service).changesCommits,
})

func refOf(t *kanban.Task, rt *repoTree) TreeRef {
	return TreeRef{TaskID: t.ID, RepositoryID: rt.repo.ID, BaseBranch: rt.tree.Base(), Branch: rt.tree.Branch()}
}

func (s *Service) changesList(ctx context.Context, p Principal, in ChangesIn) (*ChangesOut, error) {
	t, rt, err := s.changesTree(ctx, p, in.TaskID, in.RepositoryID)
	if err != nil {
		return nil, err
	}
	ch, err := rt.tree.Changes(ctx, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	if err != nil {
		return nil, s.gitErr(err)
	}
	return &ChangesOut{TreeRef: refOf(t, rt), Changes: ch}, nil
}

func (s *Service) changesDiff(ctx context.Context, p Principal, in DiffIn) (*DiffOut, error) {
	t, rt, err := s.changesTree(ctx, p, in.TaskID, in.RepositoryID)
	if err != nil {
		return nil, err
	}
	d, err := rt.tree.Diff(ctx, worktree.DiffRequest{Path: in.Path, OldPath: in.OldPath})
	if err != nil {
		return nil, s.gitErr(err)
	}
	return &DiffOut{TreeRef: refOf(t, rt), FileDiff: d}, nil
}

func (s *Service) changesCommits(ctx context.Context, p Principal, in ChangesIn) (*CommitsOut, error) {
	t, rt, err := s.changesTree(ctx, p, in.TaskID, in.RepositoryID)
	if err != nil {
		return nil, err
	}
	l, err := rt.tree.Commits(ctx, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	if err != nil {
		return nil, s.gitErr(err)
	}
	return &CommitsOut{TreeRef: refOf(t, rt), List: l}, nil
}

// changesSummary sums up each repository of the task, a page of them at
// a time (the repositories in link order; the cursor is an offset).
func (s *Service) changesSummary(ctx context.Context, p Principal, in SummaryIn) (*kanban.List[RepoChanges], error) {
	page, err := kanban.Page{Limit: in.Limit, Cursor: in.Cursor}.Normalize()
	if err != nil {
		return nil, err
	}
	start, err := decodeOffset(page.Cursor)
	if err != nil {
		return nil, err
	}
	t, err := s.changesTask(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	owner, links, err := s.taskLinks(ctx, t)
	if err != nil {
		return nil, err
	}
	start = min(start, len(links))
	end := min(start+page.Limit, len(links))
	out := &kanban.List[RepoChanges]{Items: make([]RepoChanges, 0, end-start)}
	for _, link := range links[start:end] {
		out.Items = append(out.Items, s.repoSummary(ctx, t, owner, link))
	}
	if end < len(links) {
		out.NextCursor = encodeOffset(end)
	}
	return out, nil
}

// repoSummary reads one repository's totals; a refusal is reported in the
// entry (its safe message), so one repository without a checkout does not
// hide the others.
func (s *Service) repoSummary(ctx context.Context, t, owner *kanban.Task, link kanban.TaskRepository) RepoChanges {
	rc := RepoChanges{TreeRef: TreeRef{TaskID: t.ID, RepositoryID: link.RepositoryID}}
	rt, err := s.openLink(ctx, owner, link)
	if err == nil {
		var ch *worktree.Changes
		ch, err = rt.tree.Changes(ctx, kanban.Page{Limit: 1})
		rc.TreeRef, rc.Name = refOf(t, rt), rt.repo.Name
		if err == nil {
			rc.MergeBase, rc.Head, rc.Total, rc.Additions, rc.Deletions = ch.MergeBase, ch.Head, ch.Total, ch.Additions, ch.Deletions
		}
	}
	if err != nil {
		rc.Error = safeMessage(s.gitErr(err))
	}
	return rc
}

// changesTree resolves the task and opens the repository a call names.
func (s *Service) changesTree(ctx context.Context, p Principal, taskID, repositoryID string) (*kanban.Task, *repoTree, error) {
	t, err := s.changesTask(ctx, p, taskID)
	if err != nil {
		return nil, nil, err
	}
	rt, err := s.openTree(ctx, t, repositoryID)
	if err != nil {
		return nil, nil, s.gitErr(err)
	}
	return t, rt, nil
}

// gitErr logs what git said about a failure (redacted, for the server's
// log only) and returns err, whose text is safe for the caller.
func (s *Service) gitErr(err error) error {
	var we *worktree.Error
	if errors.As(err, &we) && we.Detail() != "" {
		s.log.Warn("git failed", "code", string(kanban.ErrorCode(err)), "error", we.Error(), "detail", we.Detail())
	}
	return err
}

// safeMessage is the text of an error a caller may see: a domain error's
// message, else that it failed.
func safeMessage(err error) string {
	if e, ok := kanban.AsError(err); ok && e.Code != kanban.CodeInternal {
		return e.Message
	}
	return "the repository's changes could not be read"
}

// An offset cursor is "o" and the offset of the next item.
func encodeOffset(n int) string { return "o" + strconv.Itoa(n) }

func decodeOffset(c string) (int, error) {
	if c == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(c, "o"))
	if !strings.HasPrefix(c, "o") || err != nil || n < 0 {
		return 0, kanban.FieldError("cursor", "is not a valid cursor")
	}
	return n, nil
}
