package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// The PR automation tools (the reference's): task mode, bound to the
// session's own task (task_id is dropped: the backend attaches it).

var groupPRAutomation = declare(&Group{Name: "pr-automation", Tools: []*Tool{
	{
		Name:   "get_task_pr_automation_kandev",
		Action: kanban.ActionTaskPRAutomationGet,
		Drop:   []string{"task_id"},
		Title:  "Get task PR automation",
		Description: "Read your task's GitHub pull request automation: per linked PR (pr_options) its five switches, and " +
			"task-wide the auto-fix prompt. The top-level switches are true only when every linked PR has them on.",
		Output: prAutomationOut,
		Hints:  ReadHints,
	},
	{
		Name:   "update_task_pr_automation_kandev",
		Action: kanban.ActionTaskPRAutomationUpdate,
		Drop:   []string{"task_id"},
		Title:  "Update task PR automation",
		Description: "Change your task's GitHub pull request automation (auto-fix, auto-merge, lifecycle prompts). Give " +
			"repository_id and pr_number to change one linked PR, or neither for every linked PR; auto_fix_prompt_override " +
			"is task-wide. At least one setting is required.",
		Output: prAutomationOut,
		Hints:  IdempotentWrite,
	},
}})

var groupMRAutomation = declare(&Group{Name: "mr-automation", Tools: []*Tool{
	{
		Name:   "get_task_mr_automation_kandev",
		Action: kanban.ActionTaskMRAutomationGet,
		Drop:   []string{"task_id"},
		Title:  "Get task MR automation",
		Description: "Read your task's GitLab merge request automation: per linked MR (pr_options) its five switches, and " +
			"task-wide the auto-fix prompt.",
		Output: prAutomationOut,
		Hints:  ReadHints,
	},
	{
		Name:   "update_task_mr_automation_kandev",
		Action: kanban.ActionTaskMRAutomationUpdate,
		Drop:   []string{"task_id"},
		Title:  "Update task MR automation",
		Description: "Change your task's GitLab merge request automation (auto-fix, auto-merge, lifecycle prompts). Give " +
			"repository_id, project_path and mr_iid to change one linked MR, or none for every linked MR; " +
			"auto_fix_prompt_override is task-wide. At least one setting is required.",
		Output: prAutomationOut,
		Hints:  IdempotentWrite,
	},
}})

var prAutomationOut = out("A task's PR automation settings.", P{
	"task_id":                    Str("The task."),
	"auto_fix_enabled":           Bool("On for every linked pull request."),
	"auto_merge_enabled":         Bool("On for every linked pull request."),
	"prompt_on_review_requested": Bool("On for every linked pull request."),
	"prompt_on_merged":           Bool("On for every linked pull request."),
	"prompt_on_closed":           Bool("On for every linked pull request."),
	"auto_fix_prompt_override":   S{"type": []any{"string", "null"}, "description": "The task's auto-fix prompt; null: the default."},
	"effective_auto_fix_prompt":  Str("The auto-fix prompt used."),
	"auto_fix_max_rounds":        Int("Auto-fix prompts per pull request before it pauses."),
	"pr_options": Arr("Each linked pull request's switches.", out("One pull request.", P{
		"repository_id": Str("Its repository."), "pr_number": Int("Its number (IID on GitLab)."),
	}, "repository_id", "pr_number")),
	"pr_states": Arr("What the automation did on each.", S{"type": "object"}),
}, "task_id", "pr_options")
