package action

import (
	"cmp"
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// A task's changes are read in the directory its agent works in for each
// repository, as the server knows it (the store and the filesystem
// policy, never a payload): the task's git worktree of that repository,
// or the repository's own checkout when the task's newest session ran
// there (the local executor). A subtask that shares its parent's
// directory reads its parent's.

// repoTree is one repository a task works in, opened.
type repoTree struct {
	repo *kanban.Repository
	link kanban.TaskRepository
	tree *worktree.Tree
	base string
	// branch is the task's worktree's branch; empty when the tree is the
	// repository's own checkout.
	branch string
}

// changesTask resolves the task a changes or review call names: the
// operator reaches any task, a session only its own ("self" or its id).
func (s *Service) changesTask(ctx context.Context, p Principal, taskID string) (*kanban.Task, error) {
	if taskID == "" && p.Kind == Session {
		taskID = "self"
	}
	t, err := s.taskFor(ctx, p, taskID)
	if err != nil {
		return nil, err
	}
	if p.Kind == Session && t.ID != p.TaskID {
		return nil, kanban.Errorf(kanban.CodeForbidden, "a session may read the changes of its own task only")
	}
	return t, nil
}

// taskLinks returns the repositories of the task whose directory t uses
// (t or the ancestor it shares with), in link order.
func (s *Service) taskLinks(ctx context.Context, t *kanban.Task) (*kanban.Task, []kanban.TaskRepository, error) {
	owner, err := s.dirs.Owner(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	links, err := s.store.ListTaskRepositories(ctx, owner.ID)
	if err != nil {
		return nil, nil, err
	}
	return owner, links, nil
}

// pickLink returns the link of repositoryID, or the only one when it is
// empty.
func pickLink(links []kanban.TaskRepository, repositoryID string) (kanban.TaskRepository, error) {
	if repositoryID == "" {
		switch len(links) {
		case 0:
			return kanban.TaskRepository{}, kanban.Errorf(kanban.CodeNotFound, "the task has no repository")
		case 1:
			return links[0], nil
		}
		return kanban.TaskRepository{}, kanban.FieldError("repository_id", "is required: the task works in several repositories")
	}
	for _, l := range links {
		if l.RepositoryID == repositoryID {
			return l, nil
		}
	}
	return kanban.TaskRepository{}, kanban.FieldError("repository_id", "is not a repository of the task")
}

// openTree opens the directory the task works in for repository
// repositoryID (or its only one).
func (s *Service) openTree(ctx context.Context, t *kanban.Task, repositoryID string) (*repoTree, error) {
	owner, links, err := s.taskLinks(ctx, t)
	if err != nil {
		return nil, err
	}
	link, err := pickLink(links, repositoryID)
	if err != nil {
		return nil, err
	}
	return s.openLink(ctx, owner, link)
}

func (s *Service) openLink(ctx context.Context, owner *kanban.Task, link kanban.TaskRepository) (*repoTree, error) {
	if s.git == nil {
		return nil, kanban.Errorf(kanban.CodeUnavailable, "git is not installed on the backend's machine")
	}
	repo, err := s.store.GetRepository(ctx, link.RepositoryID)
	if err != nil {
		return nil, err
	}
	base := cmp.Or(link.BaseBranch, repo.DefaultBranch)
	if base == "" {
		return nil, kanban.Errorf(kanban.CodeConflict, "the task's repository has no base branch; set one")
	}
	checkout, err := s.dirs.Source(repo)
	if kanban.ErrorCode(err) == kanban.CodeNotFound && repo.LocalPath == "" {
		return nil, kanban.Errorf(kanban.CodeNotFound, "the repository has no checkout on this machine (a remote one is cloned for the task's first exec-worktree session)")
	}
	if err != nil {
		return nil, err
	}
	spec := worktree.Spec{Repo: checkout.Path, Base: base}
	wt, err := s.store.GetWorktree(ctx, owner.ID, repo.ID)
	switch {
	case err == nil:
		d, err := s.fs.KandevDir(wt.Path)
		if err != nil {
			return nil, err
		}
		spec.Dir, spec.Branch = d.Path, wt.Branch
	case err != nil && kanban.ErrorCode(err) != kanban.CodeNotFound:
		return nil, err
	default:
		ran, err := s.ranIn(ctx, owner.ID, checkout.Path)
		if err != nil {
			return nil, err
		}
		if !ran {
			return nil, kanban.Errorf(kanban.CodeNotFound, "no agent of the task has worked in this repository yet")
		}
		spec.Dir = checkout.Path // on the branch checked out there
	}
	tree, err := s.git.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &repoTree{repo: repo, link: link, tree: tree, base: base, branch: spec.Branch}, nil
}

// ranIn reports whether the task's newest session that has a working
// directory ran in dir.
func (s *Service) ranIn(ctx context.Context, taskID, dir string) (bool, error) {
	var workdir string
	err := s.eachSession(ctx, taskID, func(sess *kanban.Session) bool {
		workdir = sess.Workdir
		return workdir == ""
	})
	return workdir != "" && workdir == dir, err
}
