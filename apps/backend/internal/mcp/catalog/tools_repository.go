package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupRepositories = declare(&Group{Name: "repositories", Tools: []*Tool{
	{
		Action: kanban.ActionRepositoryList,
		Title:  "List repositories",
		Description: "List the code repositories registered in a workspace, oldest first. Use an id as repository_id " +
			"when creating a task.",
		Output: listOf(repositoryOut),
		Hints:  ReadHints,
	},
}})

var repositoryOut = out("A repository.", P{
	"id": Str("Repository id."), "workspace_id": Str("Workspace."), "name": Str("Name."),
	"local_path":     Str("Local checkout path; absent when unknown."),
	"remote_url":     Str("Remote URL; absent when unknown."),
	"default_branch": Str("Branch tasks start from by default."),
}, "id", "workspace_id", "name", "default_branch")
