package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupBranchSources = declare(&Group{Name: "branch-sources", Tools: []*Tool{
	{
		Action: kanban.ActionTaskRepositoryAdd,
		Title:  "Add branch to task",
		Description: "Attach a workspace repository to a task with the branch to start from (or an existing one to check " +
			"out), named by at most one of repository_id, local_path or repository_url (none when the task has one); only " +
			"the operator registers new ones. Re-adding updates its branches. A task in git worktrees gets its worktree " +
			"now (worktree_path, relative to your working directory).",
		Output: out("The task's link to the repository.", P{
			"task_repository":     taskRepoLinkOut,
			"repository":          workspaceRepoOut,
			"repository_created":  Bool("True when this call registered the repository in the workspace."),
			"worktree_path":       Str("The repository's new worktree, when it was created now (relative to your working directory)."),
			"task_workspace_path": Str("The task directory holding the task's worktrees, when one was created now (relative to your working directory)."),
			"agent_cwd_changed":   Bool("Always false: a running agent keeps its working directory."),
		}, "task_repository", "repository", "repository_created", "agent_cwd_changed"),
		Hints: IdempotentWrite,
	},
	{
		Action: kanban.ActionWorkspaceSourceAdd,
		Title:  "Add workspace sources",
		Description: "Attach repositories and folders of the workspace to a task, in order, all checked before any is " +
			"attached. A repository is named by one of repository_id, local_path, remote_url or github_url; a folder by an " +
			"absolute local_path. Only the operator registers new ones; re-attaching changes nothing.",
		Output: out("The attached sources, in input order.", P{
			"task_id": Str("The task they are attached to."),
			"items": Arr("One entry per source.", out("An attached source.", P{
				"kind":            Str("repository or folder."),
				"repository":      workspaceRepoOut,
				"task_repository": taskRepoLinkOut,
				"created":         Bool("True when this call registered it in the workspace."),
			}, "kind", "repository", "task_repository", "created")),
		}, "task_id", "items"),
		Hints: IdempotentWrite,
	},
	{
		Action: kanban.ActionTaskRepositorySetBaseBranch,
		Title:  "Update repository base branch",
		Description: "Change the branch a task's work starts from in one of its repositories (its checkout branch is " +
			"kept). Name the link by task_repository_id (in Kandev, the linked repository's id, as task_repository." +
			"repository_id reports it) or repository_id; either may be omitted when the task has exactly one repository.",
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
		"local_path":     Str("Local checkout path; absent for a task-mode session."),
		"remote_url":     Str("Remote URL, if known."),
		"default_branch": Str("Default branch."),
	}, "id", "workspace_id", "name", "default_branch")
)
