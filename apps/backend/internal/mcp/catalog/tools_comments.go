package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupComments = declare(&Group{Name: "comments", Tools: []*Tool{
	{
		Action: kanban.ActionTaskCommentAdd,
		Title:  "Add task comment",
		Description: "Comment on a task (yours by default): progress, a question for the team, a review note. The comment shows " +
			"in the task's conversation and runs its step's on_comment automations, which may wake the task's agent.",
		Output: commentOut,
		Hints:  WriteHints,
	},
	{
		Action:      kanban.ActionTaskCommentList,
		Title:       "List task comments",
		Description: "List a task's comments, oldest first, from the operator and agents.",
		Output:      listOf(commentOut),
		Hints:       ReadHints,
	},
}})

var commentOut = out("A task comment.", P{
	"id":               Str("Comment id."),
	"task_id":          Str("The task."),
	"author":           Str(`"operator" or "session:<id>".`),
	"agent_profile_id": Str("Agent profile of the session that wrote it (agents only)."),
	"body":             Str("The comment."),
	"created_at":       Str("When written (RFC 3339)."),
}, "id", "task_id", "author", "body", "created_at")
