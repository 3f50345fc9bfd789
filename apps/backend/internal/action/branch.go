package action

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// branchReach: a session changes the repositories and branches of the
// tasks it may change (writeReach), whatever --session-scope says.
const branchReach = writeReach

const branchForbidden = "a session may only change the repositories of its own task, its subtasks and the tasks it created"

// TaskBranchIn is the payload of task.repository.add: link a repository
// (by at most one locator; none when the task has exactly one) to a task
// with a base branch.
type TaskBranchIn struct {
	TaskID        string `json:"task_id,omitzero"`
	RepositoryID  string `json:"repository_id,omitzero"`
	LocalPath     string `json:"local_path,omitzero"`
	RepositoryURL string `json:"repository_url,omitzero"`
	// BaseBranch defaults to the repository's default branch.
	BaseBranch     string `json:"base_branch,omitzero"`
	CheckoutBranch string `json:"checkout_branch,omitzero"`
}

// TaskBranchOut is the result of task.repository.add.
type TaskBranchOut struct {
	TaskRepository *kanban.TaskRepository `json:"task_repository"`
	Repository     *kanban.Repository     `json:"repository"`
	// RepositoryCreated is true when a locator registered a new repository.
	RepositoryCreated bool `json:"repository_created"`
	// WorktreePath is the repository's new worktree when the task already
	// works in worktrees (made now, beside its others), and
	// TaskWorkspacePath the task directory holding them; both absent when
	// the task's next exec-worktree session makes them. A task-mode
	// session, shown no absolute server path, gets them relative to its
	// working directory (see relativeWorktree).
	WorktreePath      string `json:"worktree_path,omitzero"`
	TaskWorkspacePath string `json:"task_workspace_path,omitzero"`
	// AgentCwdChanged is always false: a running agent keeps its working
	// directory (its next session works in the task directory).
	AgentCwdChanged bool `json:"agent_cwd_changed"`
}

// SourceIn is one source to attach to a task: a repository (by
// repository_id, local_path, remote_url or github_url, with branches) or a
// plain folder (local_path, display_name).
type SourceIn struct {
	Kind           string `json:"kind,omitzero"`
	RepositoryID   string `json:"repository_id,omitzero"`
	LocalPath      string `json:"local_path,omitzero"`
	RemoteURL      string `json:"remote_url,omitzero"`
	GitHubURL      string `json:"github_url,omitzero"`
	BaseBranch     string `json:"base_branch,omitzero"`
	CheckoutBranch string `json:"checkout_branch,omitzero"`
	DisplayName    string `json:"display_name,omitzero"`
}

// SourcesAddIn is the payload of workspace.source.add.
type SourcesAddIn struct {
	// TaskID is the task to attach to ("self" for a session, its default).
	TaskID  string     `json:"task_id,omitzero"`
	Sources []SourceIn `json:"sources,omitzero"`
}

// SourceOut is one attached source.
type SourceOut struct {
	Kind           string                 `json:"kind"`
	Repository     *kanban.Repository     `json:"repository"`
	TaskRepository *kanban.TaskRepository `json:"task_repository"`
	// Created is true when this call registered the repository or folder
	// in the workspace.
	Created bool `json:"created"`
}

// SourcesAddOut is the result of workspace.source.add, in input order.
type SourcesAddOut struct {
	TaskID string      `json:"task_id"`
	Items  []SourceOut `json:"items"`
}

// BaseBranchIn is the payload of task.repository.set_base_branch. A task
// links each repository once, so a link's id (task_repository_id) is its
// repository's id.
type BaseBranchIn struct {
	TaskID           string `json:"task_id,omitzero"`
	TaskRepositoryID string `json:"task_repository_id,omitzero"`
	RepositoryID     string `json:"repository_id,omitzero"`
	BaseBranch       string `json:"base_branch,omitzero"`
}

var _ = declare(Def[TaskBranchIn, *TaskBranchOut]{
	Name:   kanban.ActionTaskRepositoryAdd,
	Effect: Writes,
	Tool:   "add_branch_to_task_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id":         branchTaskRef(),
		"repository_id":   idProp("Repository of the workspace."),
		"local_path":      schema.Str("Local checkout path of the repository.").Len(1, kanban.MaxPathLen),
		"repository_url":  schema.Str("Remote URL of the repository.").Len(1, kanban.MaxURLLen),
		"base_branch":     schema.Str("Branch to start from; default the repository's.").Len(1, kanban.MaxBranchLen),
		"checkout_branch": schema.Str("Existing branch to check out instead.").Len(1, kanban.MaxBranchLen),
	}),
	Run: (*Service).addTaskBranch,
})

var _ = declare(Def[SourcesAddIn, *SourcesAddOut]{
	Name:   kanban.ActionWorkspaceSourceAdd,
	Effect: Writes,
	Tool:   "add_workspace_sources_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id": branchTaskRef(),
		"sources": schema.Arr("The sources, in order.", schema.Obj("One source: a repository or a folder.", schema.P{
			"kind":            schema.Enum("repository or folder.", kanban.SourceKinds...),
			"repository_id":   idProp("A repository of the workspace."),
			"local_path":      schema.Str("Absolute path: a checkout or a folder.").Len(1, kanban.MaxPathLen),
			"remote_url":      schema.Str("Remote URL of the repository.").Len(1, kanban.MaxURLLen),
			"github_url":      schema.Str("https://github.com/owner/repo URL.").Len(1, kanban.MaxURLLen),
			"base_branch":     schema.Str("Branch to start from; default the repository's.").Len(1, kanban.MaxBranchLen),
			"checkout_branch": schema.Str("Existing branch to check out.").Len(1, kanban.MaxBranchLen),
			"display_name":    schema.Str("Folder name shown; default its last path segment.").Len(1, kanban.MaxNameLen),
		}, "kind")).Items(1, kanban.MaxSourcesPerCall),
	}, "sources"),
	Run: (*Service).addSources,
})

var _ = declare(Def[BaseBranchIn, *kanban.TaskRepository]{
	Name:   kanban.ActionTaskRepositorySetBaseBranch,
	Effect: Writes,
	Tool:   "update_repository_base_branch_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id":            branchTaskRef(),
		"task_repository_id": idProp("The task's repository link to change: its repository_id."),
		"repository_id":      idProp("Repository of the task to change (same as task_repository_id)."),
		"base_branch":        schema.Str("The new base branch.").Len(1, kanban.MaxBranchLen),
	}, "base_branch"),
	Run: (*Service).setBaseBranch,
})

// addTaskBranch links a repository to a task with a base branch (and an
// optional branch to check out). A local path or URL unknown to the
// workspace registers the repository (the operator only; see
// resolveSource); without a locator the task's only repository is meant.
// A task-mode session gets the repository without its local path.
func (s *Service) addTaskBranch(ctx context.Context, p Principal, in TaskBranchIn) (*TaskBranchOut, error) {
	if err := checkLocator(in.RepositoryID, in.LocalPath, in.RepositoryURL, true); err != nil {
		return nil, err
	}
	if err := checkGitText("", "repository_url", in.RepositoryURL, in.BaseBranch, in.CheckoutBranch); err != nil {
		return nil, err
	}
	t, err := s.taskInTree(ctx, p, in.TaskID, branchReach, branchForbidden)
	if err != nil {
		return nil, err
	}
	see, err := s.seesLocalPaths(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &TaskBranchOut{}
	switch {
	case in.RepositoryID != "":
		out.Repository, err = s.repositoryInScope(ctx, p, in.RepositoryID)
	case in.LocalPath != "" || in.RepositoryURL != "":
		var reg *kanban.Repository
		out.Repository, reg, err = s.resolveSource(ctx, p, t.WorkspaceID, kanban.Repository{LocalPath: in.LocalPath, RemoteURL: in.RepositoryURL}, "local_path")
		if err == nil && reg != nil {
			out.Repository, err = s.register(ctx, reg)
			out.RepositoryCreated = err == nil
		}
	default:
		out.Repository, err = s.onlyRepository(ctx, t.ID)
	}
	if err != nil {
		return nil, err
	}
	// The worktree comes first: a repository whose worktree cannot be
	// made (a base branch it lacks) is not linked.
	wt, err := s.agents.AddWorktree(ctx, t, kanban.TaskRepository{TaskID: t.ID, RepositoryID: out.Repository.ID,
		BaseBranch: cmp.Or(in.BaseBranch, out.Repository.DefaultBranch), CheckoutBranch: in.CheckoutBranch})
	if err != nil {
		return nil, err
	}
	if out.TaskRepository, err = s.linkRepository(ctx, t, out.Repository, in.BaseBranch, in.CheckoutBranch); err != nil {
		return nil, err
	}
	if wt != nil {
		out.WorktreePath, out.TaskWorkspacePath = wt.Path, filepath.Dir(wt.Path)
	}
	if !see {
		out.Repository = withoutLocalPath(out.Repository)
		if err := s.relativeWorktree(ctx, p, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// relativeWorktree makes the new worktree's paths relative for a caller
// that is shown no absolute server path (a task-mode session): relative
// to its session's working directory, or, for a session Kandev did not
// launch (none), to the task directory.
func (s *Service) relativeWorktree(ctx context.Context, p Principal, out *TaskBranchOut) error {
	if out.WorktreePath == "" {
		return nil
	}
	base := out.TaskWorkspacePath
	if sess, err := s.store.GetSession(ctx, p.SessionID); err != nil {
		return err
	} else if sess.Workdir != "" {
		base = sess.Workdir
	}
	wt, err1 := filepath.Rel(base, out.WorktreePath)
	dir, err2 := filepath.Rel(base, out.TaskWorkspacePath)
	if err1 != nil || err2 != nil {
		return kanban.Errorf(kanban.CodeInternal, "the worktree's path is not relative to the session's directory")
	}
	out.WorktreePath, out.TaskWorkspacePath = wt, dir
	return nil
}

// onlyRepository returns the repository of a task that has exactly one.
func (s *Service) onlyRepository(ctx context.Context, taskID string) (*kanban.Repository, error) {
	links, err := s.store.ListTaskRepositories(ctx, taskID)
	if err != nil {
		return nil, err
	}
	if len(links) != 1 {
		return nil, &kanban.Error{Code: kanban.CodeValidation, Field: "repository",
			Message: "provide one of repository_id, local_path, repository_url (the task does not have exactly one repository)"}
	}
	return s.store.GetRepository(ctx, links[0].RepositoryID)
}

// linkRepository links repo to task t (base branch default: the
// repository's default branch) and tells the workspace.
func (s *Service) linkRepository(ctx context.Context, t *kanban.Task, repo *kanban.Repository, base, checkout string) (*kanban.TaskRepository, error) {
	if base == "" {
		base = repo.DefaultBranch
	}
	link, err := s.store.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: t.ID, RepositoryID: repo.ID,
		BaseBranch: base, CheckoutBranch: checkout})
	if err != nil {
		return nil, err
	}
	kanban.EventTaskRepositoryUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), link)
	s.ProfilesChanged(ctx, t.ID) // a repository of a forge serves its tools
	return link, nil
}

// checkLocator requires exactly one repository locator (at most one when
// optional); their sizes are the contract's.
func checkLocator(id, localPath, url string, optional bool) error {
	switch n := countSet(id, localPath, url); {
	case n > 1:
		return &kanban.Error{Code: kanban.CodeValidation, Field: "repository",
			Message: "provide at most one of repository_id, local_path, repository_url"}
	case n == 0 && !optional:
		return &kanban.Error{Code: kanban.CodeValidation, Field: "repository",
			Message: "provide one of repository_id, local_path, repository_url"}
	}
	return nil
}

// checkGitText refuses, before anything is written, a remote URL (field
// urlField) that is not one (kanban.CheckRemoteURL) and base or checkout
// branches that are not branch names (kanban.CheckBranch); prefix leads
// the branch field names ("sources[2].").
func checkGitText(prefix, urlField, remoteURL, base, checkout string) error {
	if err := kanban.CheckRemoteURL(urlField, remoteURL); err != nil {
		return err
	}
	if err := kanban.CheckBranch(prefix+"base_branch", base); err != nil {
		return err
	}
	return kanban.CheckBranch(prefix+"checkout_branch", checkout)
}

// countSet counts the non-empty values.
func countSet(vs ...string) int {
	n := 0
	for _, v := range vs {
		if v != "" {
			n++
		}
	}
	return n
}

// addSources attaches repositories and folders to a task (a session's
// own by default, or one of its subtasks). A source the workspace does not
// have is registered, by the operator only, its local path checked by the
// filesystem policy. Every source is checked and resolved before the first
// is written; attaching what the task already has changes nothing, so an
// exact retry is harmless.
func (s *Service) addSources(ctx context.Context, p Principal, in SourcesAddIn) (*SourcesAddOut, error) {
	for i, src := range in.Sources {
		if err := checkSource(i, src, in.Sources[:i]); err != nil {
			return nil, err
		}
	}
	t, err := s.taskInTree(ctx, p, in.TaskID, branchReach, branchForbidden)
	if err != nil {
		return nil, err
	}
	repos := make([]*kanban.Repository, len(in.Sources))
	regs := make([]*kanban.Repository, len(in.Sources))
	for i, src := range in.Sources { // nothing is written before every source is resolved
		if src.RepositoryID != "" {
			if repos[i], err = s.repositoryInScope(ctx, p, src.RepositoryID); err != nil {
				return nil, err
			}
			if repos[i].WorkspaceID != t.WorkspaceID {
				return nil, kanban.FieldError(fmt.Sprintf("sources[%d].repository_id", i), "must be a repository of the task's workspace")
			}
			continue
		}
		src := kanban.Repository{Name: src.DisplayName, LocalPath: src.LocalPath, RemoteURL: src.remote()}
		if repos[i], regs[i], err = s.resolveSource(ctx, p, t.WorkspaceID, src, fmt.Sprintf("sources[%d].local_path", i)); err != nil {
			return nil, err
		}
		for j := range i { // two spellings of one directory
			if regs[i] != nil && regs[j] != nil && regs[j].LocalPath+"\x00"+regs[j].RemoteURL == regs[i].LocalPath+"\x00"+regs[i].RemoteURL {
				return nil, kanban.FieldError(fmt.Sprintf("sources[%d]", i), "repeats an earlier source")
			}
		}
	}
	see, err := s.seesLocalPaths(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &SourcesAddOut{TaskID: t.ID, Items: make([]SourceOut, 0, len(in.Sources))}
	for i, src := range in.Sources {
		item := SourceOut{Kind: src.Kind, Repository: repos[i]}
		if regs[i] != nil {
			if item.Repository, err = s.register(ctx, regs[i]); err != nil {
				return nil, err
			}
			item.Created = true
		}
		if item.TaskRepository, err = s.linkRepository(ctx, t, item.Repository, src.BaseBranch, src.CheckoutBranch); err != nil {
			return nil, err
		}
		if !see {
			item.Repository = withoutLocalPath(item.Repository)
		}
		out.Items = append(out.Items, item)
	}
	return out, nil
}

// remote is the source's remote URL (github_url is one).
func (src SourceIn) remote() string {
	if src.RemoteURL != "" {
		return src.RemoteURL
	}
	return src.GitHubURL
}

func checkSource(i int, src SourceIn, earlier []SourceIn) error {
	path := fmt.Sprintf("sources[%d]", i)
	switch src.Kind {
	case kanban.SourceRepository:
		if src.DisplayName != "" {
			return kanban.FieldError(path+".display_name", "is only for folder sources")
		}
		if src.RemoteURL != "" && src.GitHubURL != "" {
			return kanban.FieldError(path, "give remote_url or github_url, not both")
		}
		if n := countSet(src.RepositoryID, src.LocalPath, src.remote()); n != 1 {
			return kanban.FieldError(path, "needs exactly one of repository_id, local_path, remote_url, github_url")
		}
		if src.GitHubURL != "" && !strings.HasPrefix(src.GitHubURL, "https://github.com/") {
			return kanban.FieldError(path+".github_url", "must start with https://github.com/")
		}
		urlField := path + ".remote_url"
		if src.GitHubURL != "" {
			urlField = path + ".github_url"
		}
		if err := checkGitText(path+".", urlField, src.remote(), src.BaseBranch, src.CheckoutBranch); err != nil {
			return err
		}
	case kanban.SourceFolder:
		if src.RepositoryID != "" || src.RemoteURL != "" || src.GitHubURL != "" || src.BaseBranch != "" || src.CheckoutBranch != "" {
			return kanban.FieldError(path, "a folder source takes only local_path and display_name")
		}
		if !filepath.IsAbs(src.LocalPath) {
			return kanban.FieldError(path+".local_path", "must be an absolute path")
		}
	default:
		return kanban.FieldError(path+".kind", "must be repository or folder")
	}
	for _, e := range earlier {
		if (src.RepositoryID != "" && e.RepositoryID == src.RepositoryID) || (src.LocalPath != "" && e.LocalPath == src.LocalPath) ||
			(src.remote() != "" && e.remote() == src.remote()) {
			return kanban.FieldError(path, "repeats an earlier source")
		}
	}
	return nil
}

// setBaseBranch changes the base branch of a task's repository link,
// keeping its checkout branch. Without repository_id the task must have
// exactly one repository.
func (s *Service) setBaseBranch(ctx context.Context, p Principal, in BaseBranchIn) (*kanban.TaskRepository, error) {
	switch {
	case in.TaskRepositoryID != "" && in.RepositoryID != "" && in.TaskRepositoryID != in.RepositoryID:
		return nil, kanban.FieldError("task_repository_id", "names another link than repository_id; give one of them")
	case in.TaskRepositoryID != "":
		in.RepositoryID = in.TaskRepositoryID
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
	kanban.EventTaskRepositoryUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), out)
	return out, nil
}

// branchTaskRef is the task_id of the branch actions.
func branchTaskRef() schema.S {
	return selfTaskRef(`Task to change: yours ("self", default), a subtask or a task you created.`)
}
