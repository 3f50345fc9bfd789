package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// TestReviewOverWebSocketReachesTheAgent: the mock agent (the real
// binary) writes a file in its task's git worktree; over the real
// WebSocket API the operator sees the change and its diff, comments on
// two lines (one through the CLI) and sends the review; the agent gets
// both comments in one prompt (one turn follows both @say lines) and the
// comments are sent.
func TestReviewOverWebSocketReachesTheAgent(t *testing.T) {
	t.Parallel()
	e, task, sid := agentWroteApp(t)
	c := e.wsClient(e.token, nil)
	ctx := context.Background()
	readChangesOverWS(t, c, task.ID)
	var c1, c2 kanban.ReviewComment
	if err := c.Call(ctx, kanban.ActionReviewCommentCreate, map[string]any{"task_id": task.ID, "path": "src/app.go", "start_line": 3,
		"body": "@say first comment seen"}, &c1); err != nil {
		t.Fatal(err)
	}
	// The CLI shares the registry: the diff, and the second comment.
	if out := e.cli("changes", "diff", "--task", task.ID, "--path", "src/app.go"); !strings.Contains(out, "+const Greeting = \"hi\"\n") {
		t.Fatalf("kandev changes diff: %s", out)
	}
	if err := json.Unmarshal([]byte(e.cli("review", "comment", "--task", task.ID, "--path", "src/app.go", "--line", "1",
		"--body", "@say second comment seen")), &c2); err != nil || c2.State != kanban.CommentOpen || c2.AnchorText != "package app" {
		t.Fatalf("kandev review comment: %+v, %v", c2, err)
	}
	var sent action.ReviewSendOut
	if err := c.Call(ctx, kanban.ActionReviewSend, map[string]any{"task_id": task.ID}, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Sent) != 2 || sent.SessionID != sid {
		t.Fatalf("send %+v", sent)
	}
	first := e.waitMessage(task.ID, "message", "first comment seen")
	second := e.waitMessage(task.ID, "message", "second comment seen")
	if first.Turn != second.Turn {
		t.Fatalf("the comments were answered in turns %d and %d, want one prompt (one turn)", first.Turn, second.Turn)
	}
	checkOneReviewPrompt(t, e.conversation(task.ID))
	var listed kanban.List[kanban.ReviewComment]
	if err := c.Call(ctx, kanban.ActionReviewCommentList, map[string]any{"task_id": task.ID, "state": "sent"}, &listed); err != nil || len(listed.Items) != 2 {
		t.Fatalf("sent comments: %+v, %v", listed, err)
	}
}

// agentWroteApp is a backend whose mock agent wrote src/app.go in its
// task's git worktree and is now at rest.
func agentWroteApp(t *testing.T) (*env, *kanban.Task, string) {
	repo := gitRepo(t)
	e := newAgentEnv(t)
	prompt := strings.Join([]string{
		`Write the app.`,
		`@write src/app.go package app\n\nconst Greeting = "hi"\n`,
		`@say edited`,
	}, "\n")
	task, sid := e.startMock("Review task", prompt, map[string]any{"local_path": repo, "executor_profile_id": e.executorProfileNamed("exec-worktree")})
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "edited")
	return e, task, sid
}

// readChangesOverWS: the change and its diff over the WebSocket, and a
// traversal refused without echo.
func readChangesOverWS(t *testing.T, c *ws.Client, taskID string) {
	t.Helper()
	ctx := context.Background()
	var changes action.ChangesOut
	if err := c.Call(ctx, kanban.ActionTaskChangesList, map[string]any{"task_id": taskID}, &changes); err != nil {
		t.Fatal(err)
	}
	if changes.Changes == nil || changes.Total != 1 || changes.Items[0].Path != "src/app.go" || !changes.Items[0].Untracked || changes.Items[0].Additions != 3 {
		t.Fatalf("changes %+v", changes)
	}
	var d action.DiffOut
	if err := c.Call(ctx, kanban.ActionTaskChangesDiff, map[string]any{"task_id": taskID, "path": "src/app.go"}, &d); err != nil {
		t.Fatal(err)
	}
	if d.FileDiff == nil || !strings.Contains(d.Patch, "+const Greeting = \"hi\"\n") {
		t.Fatalf("diff %+v", d)
	}
	hostile := c.Call(ctx, kanban.ActionTaskChangesDiff, map[string]any{"task_id": taskID, "path": "../../etc/passwd"}, &d)
	if kanban.ErrorCode(hostile) != kanban.CodeValidation || strings.Contains(hostile.Error(), "passwd") {
		t.Fatalf("a traversal over the WebSocket: %v", hostile)
	}
}

// checkOneReviewPrompt: exactly one prompt holds the review, with both
// comments.
func checkOneReviewPrompt(t *testing.T, msgs []kanban.Message) {
	t.Helper()
	prompts := 0
	for _, m := range msgs {
		if m.Type == "prompt" && strings.Contains(m.Content, "first comment seen") {
			prompts++
			if !strings.Contains(m.Content, "second comment seen") || !strings.Contains(m.Content, "src/app.go, line 3") {
				t.Fatalf("the review prompt lacks a comment: %q", m.Content)
			}
		}
	}
	if prompts != 1 {
		t.Fatalf("got %d review prompts, want 1", prompts)
	}
}

// cli runs the kandev binary against the backend as the operator.
func (e *env) cli(args ...string) string {
	e.t.Helper()
	cmd := exec.Command(kandevBinary(e.t), append(args, "--backend", e.url)...)
	cmd.Env = append(os.Environ(), "KANDEV_TOKEN="+e.token)
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("kandev %v: %v: %s", args, err, out)
	}
	return string(out)
}
