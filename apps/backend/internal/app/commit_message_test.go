package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// TestCommitMessageFromAgent: task.commit with message_from_agent, over
// the operator's real WebSocket, sends the task's real mock agent one
// prompt listing the changes to commit (and the operator's instructions,
// which the mock agent follows), waits for the turn that answers it and
// commits with the agent's answer. An agent that answers nothing, or not
// within wait_seconds (its long turn then ends first, and the next
// request waits for the turn that delivers its own prompt), commits
// nothing; a message with message_from_agent is refused.
func TestCommitMessageFromAgent(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	e := newAgentEnv(t, withAgentCommands(t, map[string]any{"mock-agent": map[string]any{"command": kandevBinary(t), "args": []string{"agent", "mock"}}}))
	op := e.wsClient(e.token, nil)
	ctx := context.Background()
	var r kanban.Repository
	must(t, op.Call(ctx, kanban.ActionRepositoryCreate, action.RepositoryCreateIn{LocalPath: repo}, &r))
	task, sid := e.startMock("Answer", "Edit.\n@write src/answer.go package answer\n@say edited",
		map[string]any{"repository_id": r.ID, "executor_profile_id": e.executorProfileNamed("exec-worktree")})
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "edited")
	commits := func() int {
		var l kanban.List[worktree.Commit]
		must(t, op.Call(ctx, kanban.ActionTaskChangesCommits, action.ChangesIn{TaskID: task.ID}, &l))
		return len(l.Items)
	}
	before := commits()
	call := func(in action.CommitIn, timeout time.Duration) (*action.CommitOut, error) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var out action.CommitOut
		err := op.Call(cctx, kanban.ActionTaskCommit, in, &out)
		return &out, err
	}
	refusals := []struct {
		in   action.CommitIn
		code kanban.Code
		want string
	}{
		{action.CommitIn{TaskID: task.ID, Message: "m", MessageFromAgent: true}, kanban.CodeValidation, "not both"},
		{action.CommitIn{TaskID: task.ID, Instructions: "x"}, kanban.CodeValidation, "message_from_agent"},
		{action.CommitIn{TaskID: task.ID, MessageFromAgent: true, Instructions: "@end"}, kanban.CodeUnavailable, "holds no commit message"},
		{action.CommitIn{TaskID: task.ID, MessageFromAgent: true, Instructions: "@sleep 3000\n@say Too late", WaitSeconds: 1},
			kanban.CodeUnavailable, "within wait_seconds"},
	}
	for _, rc := range refusals {
		_, err := call(rc.in, 20*time.Second)
		if kanban.ErrorCode(err) != rc.code || !strings.Contains(err.Error(), rc.want) || strings.Contains(err.Error(), "Too late") {
			t.Fatalf("%+v: got %v, want %s mentioning %q", rc.in, err, rc.code, rc.want)
		}
		if n := commits(); n != before {
			t.Fatalf("%+v: %d commits, want %d: nothing committed", rc.in, n, before)
		}
	}
	out, err := call(action.CommitIn{TaskID: task.ID, MessageFromAgent: true, WaitSeconds: 30,
		Instructions: "@say ```Add the answer package```"}, 40*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if out.MessageFrom != "agent" || out.Commit == nil || out.Commit.Subject != "Add the answer package" {
		t.Fatalf("commit: %+v %+v", out, out.Commit)
	}
	if n := commits(); n != before+1 {
		t.Fatalf("%d commits, want %d", n, before+1)
	}
	if asked := e.commitPrompt(task.ID); !strings.Contains(asked, "- added src/answer.go (+1 -0)") || !strings.Contains(asked, "The operator's instructions") {
		t.Fatalf("the prompt the agent got: %q", asked)
	}
}

// commitPrompt returns the last commit message request in a task's
// conversation.
func (e *env) commitPrompt(taskID string) string {
	asked := ""
	for _, m := range e.conversation(taskID) {
		if m.Type == "prompt" && strings.HasPrefix(m.Content, "Kandev asks for a commit message") {
			asked = m.Content
		}
	}
	return asked
}
