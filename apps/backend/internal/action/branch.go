package action

import (
	"context"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Bounds of branch sources (the store enforces the same).
const (
	maxBranchLen   = 255
	maxPathLen     = 4096
	maxURLLen      = 2048
	maxSourcesCall = 10
)

// branchReach: a session changes the branches of its own task and of its
// descendants.
const branchReach = reachDescendants

const branchForbidden = "a session may only change the repositories of its own task and its subtasks"

// TaskBranchIn is the payload of task.repository.add: link a repository
// (by exactly one locator) to a task with a base branch.
type TaskBranchIn struct {
	TaskID         string `json:"task_id"`
	RepositoryID   string `json:"repository_id"`
	LocalPath      string `json:"local_path"`
	RepositoryURL  string `json:"repository_url"`
	Branch         string `json:"branch"`
	CheckoutBranch string `json:"checkout_branch"`
}

// TaskBranchOut is the result of task.repository.add.
type TaskBranchOut struct {
	TaskRepository *kanban.TaskRepository `json:"task_repository"`
	Repository     *kanban.Repository     `json:"repository"`
	// RepositoryCreated is true when a locator registered a new repository.
	RepositoryCreated bool `json:"repository_created"`
}

// SourceIn is one repository to register.
type SourceIn struct {
	LocalPath     string `json:"local_path"`
	RepositoryURL string `json:"repository_url"`
	Name          string `json:"name"`
	DefaultBranch string `json:"default_branch"`
}

// SourcesAddIn is the payload of workspace.source.add.
type SourcesAddIn struct {
	WorkspaceID string     `json:"workspace_id"`
	Sources     []SourceIn `json:"sources"`
}

// SourceOut is one registered repository and whether this call created it.
type SourceOut struct {
	Repository *kanban.Repository `json:"repository"`
	Created    bool               `json:"created"`
}

// SourcesAddOut is the result of workspace.source.add, in input order.
type SourcesAddOut struct {
	Items []SourceOut `json:"items"`
}

// BaseBranchIn is the payload of task.repository.set_base_branch.
type BaseBranchIn struct {
	TaskID       string `json:"task_id"`
	RepositoryID string `json:"repository_id"`
	BaseBranch   string `json:"base_branch"`
}

func (s *Service) registerBranches(r *Registry) {
	all := AllowOperator | AllowSession
	Register(r, "task.repository.add", all, s.addTaskBranch)
	Register(r, "workspace.source.add", all, s.addSources)
	Register(r, "task.repository.set_base_branch", all, s.setBaseBranch)
}

// addTaskBranch links a repository to a task with a base branch (and an
// optional branch to check out). A local path or URL unknown to the
// workspace registers the repository.
func (s *Service) addTaskBranch(ctx context.Context, p Principal, in TaskBranchIn) (*TaskBranchOut, error) {
	if err := checkLocator(in.RepositoryID, in.LocalPath, in.RepositoryURL); err != nil {
		return nil, err
	}
	if err := kanban.CheckText("branch", in.Branch, true, maxBranchLen); err != nil {
		return nil, err
	}
	if err := kanban.CheckText("checkout_branch", in.CheckoutBranch, false, maxBranchLen); err != nil {
		return nil, err
	}
	t, err := s.taskInTree(ctx, p, in.TaskID, branchReach, branchForbidden)
	if err != nil {
		return nil, err
	}
	out := &TaskBranchOut{}
	if in.RepositoryID != "" {
		if out.Repository, err = s.repositoryInScope(ctx, p, in.RepositoryID); err != nil {
			return nil, err
		}
	} else if out.Repository, out.RepositoryCreated, err = s.findOrCreateRepo(ctx, t.WorkspaceID, SourceIn{LocalPath: in.LocalPath, RepositoryURL: in.RepositoryURL}); err != nil {
		return nil, err
	}
	out.TaskRepository, err = s.store.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: t.ID, RepositoryID: out.Repository.ID,
		BaseBranch: in.Branch, CheckoutBranch: in.CheckoutBranch})
	if err != nil {
		return nil, err
	}
	s.pub.Publish(WorkspaceTopic(t.WorkspaceID), "task.repository_updated", out.TaskRepository)
	return out, nil
}

// checkLocator requires exactly one repository locator and checks sizes.
func checkLocator(id, localPath, url string) error {
	n := 0
	for _, v := range []string{id, localPath, url} {
		if v != "" {
			n++
		}
	}
	switch {
	case n > 1:
		return &kanban.Error{Code: kanban.CodeValidation, Field: "repository",
			Message: "provide at most one of repository_id, local_path, repository_url"}
	case n == 0:
		return &kanban.Error{Code: kanban.CodeValidation, Field: "repository",
			Message: "provide one of repository_id, local_path, repository_url"}
	}
	if err := kanban.CheckText("local_path", localPath, false, maxPathLen); err != nil {
		return err
	}
	return kanban.CheckText("repository_url", url, false, maxURLLen)
}

// findOrCreateRepo returns the workspace's repository with src's local
// path (else URL), registering it when there is none.
func (s *Service) findOrCreateRepo(ctx context.Context, workspaceID string, src SourceIn) (*kanban.Repository, bool, error) {
	repo, err := s.store.FindRepository(ctx, workspaceID, src.LocalPath, src.RepositoryURL)
	if err == nil {
		return repo, false, nil
	}
	if kanban.ErrorCode(err) != kanban.CodeNotFound {
		return nil, false, err
	}
	repo, err = s.store.CreateRepository(ctx, kanban.Repository{WorkspaceID: workspaceID, Name: src.Name, LocalPath: src.LocalPath,
		RemoteURL: src.RepositoryURL, DefaultBranch: src.DefaultBranch})
	if err != nil {
		return nil, false, err
	}
	s.pub.Publish(WorkspaceTopic(workspaceID), "repository.created", repo)
	return repo, true, nil
}

// addSources registers repositories in the workspace (a session's own).
// Every source is checked before the first is written; a source already
// registered (same local path, else URL) is returned with created=false.
func (s *Service) addSources(ctx context.Context, p Principal, in SourcesAddIn) (*SourcesAddOut, error) {
	if len(in.Sources) < 1 || len(in.Sources) > maxSourcesCall {
		return nil, kanban.FieldError("sources", "must have between 1 and %d items", maxSourcesCall)
	}
	for i, src := range in.Sources {
		if err := checkSource(i, src, in.Sources[:i]); err != nil {
			return nil, err
		}
	}
	ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
	if err != nil {
		return nil, err
	}
	out := &SourcesAddOut{Items: make([]SourceOut, 0, len(in.Sources))}
	for _, src := range in.Sources {
		repo, created, err := s.findOrCreateRepo(ctx, ws, src)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, SourceOut{Repository: repo, Created: created})
	}
	return out, nil
}

func checkSource(i int, src SourceIn, earlier []SourceIn) error {
	path := fmt.Sprintf("sources[%d]", i)
	if src.LocalPath == "" && src.RepositoryURL == "" {
		return kanban.FieldError(path, "needs local_path or repository_url")
	}
	for _, c := range []struct {
		field, v string
		max      int
	}{{"local_path", src.LocalPath, maxPathLen}, {"repository_url", src.RepositoryURL, maxURLLen},
		{"name", src.Name, kanban.MaxNameLen}, {"default_branch", src.DefaultBranch, maxBranchLen}} {
		if err := kanban.CheckText(path+"."+c.field, c.v, false, c.max); err != nil {
			return err
		}
	}
	for _, e := range earlier {
		if (src.LocalPath != "" && e.LocalPath == src.LocalPath) || (src.RepositoryURL != "" && e.RepositoryURL == src.RepositoryURL) {
			return kanban.FieldError(path, "repeats an earlier source")
		}
	}
	return nil
}

// setBaseBranch changes the base branch of a task's repository link,
// keeping its checkout branch. Without repository_id the task must have
// exactly one repository.
func (s *Service) setBaseBranch(ctx context.Context, p Principal, in BaseBranchIn) (*kanban.TaskRepository, error) {
	if err := kanban.CheckText("base_branch", in.BaseBranch, true, maxBranchLen); err != nil {
		return nil, err
	}
	t, err := s.taskInTree(ctx, p, in.TaskID, branchReach, branchForbidden)
	if err != nil {
		return nil, err
	}
	links, err := s.store.ListTaskRepositories(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	var link *kanban.TaskRepository
	for i := range links {
		if links[i].RepositoryID == in.RepositoryID || (in.RepositoryID == "" && len(links) == 1) {
			link = &links[i]
		}
	}
	switch {
	case link == nil && in.RepositoryID == "" && len(links) > 1:
		return nil, kanban.FieldError("repository_id", "is required: the task has several repositories")
	case link == nil && in.RepositoryID == "":
		return nil, kanban.Errorf(kanban.CodeNotFound, "the task has no repository; add one with a branch first")
	case link == nil:
		return nil, kanban.Errorf(kanban.CodeNotFound, "the task is not linked to that repository")
	}
	link.BaseBranch = in.BaseBranch
	out, err := s.store.SetTaskRepository(ctx, *link)
	if err != nil {
		return nil, err
	}
	s.pub.Publish(WorkspaceTopic(t.WorkspaceID), "task.repository_updated", out)
	return out, nil
}
