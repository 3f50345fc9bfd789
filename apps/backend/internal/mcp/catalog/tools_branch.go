package catalog

// Bounds of branch sources (as the store enforces).
const (
	maxBranchName  = 255
	maxLocalPath   = 4096
	maxRepoURL     = 2048
	maxRepoName    = 100
	maxSourcesCall = 10
)

// branchTaskRef is the task_id of the branch tools.
func branchTaskRef() S {
	return SelfTaskRef(`Task to change: your own task (default "self") or one of its subtasks.`)
}

var _ = declare(&Group{Name: "branch-sources", Tools: []*Tool{
	{
		Name:   "add_branch_to_task_kandev",
		Action: "task.repository.add",
		Title:  "Add branch to task",
		Description: "Attach a repository to a task with the branch to start from (and optionally the branch to check " +
			"out). Name the repository by exactly one of repository_id, local_path or repository_url; a path or URL the " +
			"workspace does not know yet is registered. Adding a repository the task already has updates its branches.",
		Input: Obj("", P{
			"task_id":         branchTaskRef(),
			"repository_id":   ID("Repository of the workspace. Give exactly one of repository_id, local_path, repository_url."),
			"local_path":      Str("Local checkout path of the repository.").Len(1, maxLocalPath),
			"repository_url":  Str("Remote URL of the repository.").Len(1, maxRepoURL),
			"branch":          Str("Base branch the task's work starts from.").Len(1, maxBranchName),
			"checkout_branch": Str("Branch to create or check out for the work. Default: none.").Len(1, maxBranchName),
		}, "branch"),
		Output: out("The task's link to the repository.", P{
			"task_repository":    taskRepoLinkOut,
			"repository":         workspaceRepoOut,
			"repository_created": Bool("True when this call registered the repository in the workspace."),
		}, "task_repository", "repository", "repository_created"),
		Hints: IdempotentWrite,
	},
	{
		Name:   "add_workspace_sources_kandev",
		Action: "workspace.source.add",
		Title:  "Add workspace sources",
		Description: "Register up to 10 repositories in your workspace by local path and/or remote URL, so tasks can " +
			"use them. A repository already registered (same local path, else same URL) is returned with created false.",
		Input: Obj("", P{
			"sources": Arr("Repositories to register.", Obj("One repository; give local_path, repository_url or both.", P{
				"local_path":     Str("Local checkout path.").Len(1, maxLocalPath),
				"repository_url": Str("Remote URL.").Len(1, maxRepoURL),
				"name":           Str("Display name. Default: the last path segment.").Len(1, maxRepoName),
				"default_branch": Str(`Default branch. Default "main".`).Len(1, maxBranchName),
			})).Items(1, maxSourcesCall),
		}, "sources"),
		Output: out("The repositories, in input order.", P{
			"items": Arr("One entry per source.", out("A registered repository.", P{
				"repository": workspaceRepoOut,
				"created":    Bool("True when this call registered it."),
			}, "repository", "created")),
		}, "items"),
		Hints: IdempotentWrite,
	},
	{
		Name:   "update_repository_base_branch_kandev",
		Action: "task.repository.set_base_branch",
		Title:  "Update repository base branch",
		Description: "Change the branch a task's work starts from in one of its repositories (its checkout branch is " +
			"kept). repository_id may be omitted when the task has exactly one repository.",
		Input: Obj("", P{
			"task_id":       branchTaskRef(),
			"repository_id": ID("Repository of the task to change; required when the task has several."),
			"base_branch":   Str("The new base branch.").Len(1, maxBranchName),
		}, "base_branch"),
		Output: taskRepoLinkOut,
		Hints:  IdempotentWrite,
	},
}})

var (
	taskRepoLinkOut = out("A task's link to a repository.", P{
		"task_id":         Str("The task."),
		"repository_id":   Str("The repository."),
		"base_branch":     Str("Branch the work starts from."),
		"checkout_branch": Str("Branch checked out for the work, if set."),
	}, "task_id", "repository_id", "base_branch")
	workspaceRepoOut = out("A repository of the workspace.", P{
		"id": Str("Repository id."), "workspace_id": Str("Workspace."), "name": Str("Name."),
		"local_path":     Str("Local checkout path, if known."),
		"remote_url":     Str("Remote URL, if known."),
		"default_branch": Str("Default branch."),
	}, "id", "workspace_id", "name", "default_branch")
)
