package app

import (
	"strconv"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardUsage: the task page shows the tokens and cost its agent
// reported, updated live as a turn's usage is recorded; the board shows
// the workspace's total.
func TestBoardUsage(t *testing.T) {
	e := newAgentEnv(t)
	task, sid := e.startMock("Counted task", "@say waiting for the next prompt", nil)
	e.waitState(sid, kanban.SessionIdle)
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+task.ID, "task")
	b.until("no usage yet", `document.getElementById('task-usage').textContent.includes('No usage reported yet.')`)

	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: `@usage {"inputTokens":1200,"outputTokens":300,"cachedReadTokens":800}
@cost {"used":2000,"size":200000,"cost":{"amount":0.42,"currency":"USD"}}
@say counted`}, nil)
	const want = "Agent usage: 1,200 tokens in · 300 out · 800 cached read · cost 0.4200 USD"
	b.until("the task's usage, live", `document.getElementById('task-usage').textContent === `+strconv.Quote(want))

	b.open("#/", "board")
	b.until("the board's total", `document.getElementById('board-usage').textContent === `+
		strconv.Quote("Agent usage in this workspace: 1,200 tokens in · 300 out · 800 cached read · cost 0.4200 USD"))
}
