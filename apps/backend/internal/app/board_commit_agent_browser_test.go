package app

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardCommitMessageFromAgent: in a real Chromium, the Changes tab's
// commit form with "The task's agent writes the message" ticked sends
// task.commit with message_from_agent and the text as instructions (the
// real mock agent follows them); the status shows the agent's subject
// and the task branch has the commit.
func TestBoardCommitMessageFromAgent(t *testing.T) {
	repo := gitRepo(t)
	e := newAgentEnv(t)
	op := e.wsClient(e.token, nil)
	ctx := context.Background()
	var r kanban.Repository
	must(t, op.Call(ctx, kanban.ActionRepositoryCreate, action.RepositoryCreateIn{LocalPath: repo}, &r))
	task, sid := e.startMock("Answer", "Edit.\n@write src/answer.go package answer\n@say done",
		map[string]any{"repository_id": r.ID, "executor_profile_id": e.executorProfileNamed("exec-worktree")})
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "done")
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+task.ID, "task")
	b.click("#tab-changes")
	b.until("the ship controls", `document.querySelector('#panel-changes details.ship')`)
	b.js(`document.querySelector('#panel-changes details.ship').open = true`, nil)
	b.set("#panel-changes .ship-commit [name=message]", "@say Add the answer package")
	b.click("#panel-changes .ship-commit [name=from_agent]")
	b.click("#panel-changes .ship-commit button.primary")
	b.until("the agent's commit", `(document.querySelector('#panel-changes .ship-status') || {}).textContent?.endsWith('message by the agent: Add the answer package')`)
	var commits action.CommitsOut
	must(t, op.Call(ctx, kanban.ActionTaskChangesCommits, action.ChangesIn{TaskID: task.ID}, &commits))
	if len(commits.Items) != 1 || commits.Items[0].Subject != "Add the answer package" {
		t.Fatalf("commits on the task branch: %+v", commits.List)
	}
}
