package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// e2eToken is the forge account's token (the remote's push password and
// the API's bearer token), given to the backend in a secret file: the
// token of the PR automation tests' mock (mockForge).
const e2eToken = ghToken

// TestShipThroughWebSocket: the real backend, its real mock agent editing
// its exec-worktree, and the operator's WebSocket client: commit, push to
// a bare remote served by git http-backend (Basic auth checked), open a
// pull request on the Prism-backed GitHub API (request validation on; the
// stateful layer holds the pull request, and the test tells it the pushed
// branch exists), read its checks and review, merge it rebased — and the
// step's on_pr_merged automation moves the task to Done. The agent's own
// session token is refused each of these over the same WebSocket.
func TestShipThroughWebSocket(t *testing.T) {
	gh := mockForge(t)
	remote := gittest.NewRemote(t, gittest.RemoteOptions{Token: e2eToken})
	repo := gitRepo(t)
	gitOut(t, repo, "push", "-q", remote.Dir, "main")
	secret := filepath.Join(t.TempDir(), "github-token")
	forges := filepath.Join(t.TempDir(), "forges.json")
	writeFile(t, secret, e2eToken+"\n")
	writeFile(t, forges, `{"repositories":[{"remote_url":"`+remote.URL+`","forge":"github","api_url":"`+gh.URL+`",
		"forge_repo":"octo-org/demo","token_file":"`+secret+`"}]}`)
	e := newAgentEnv(t, withAgentCommands(t, map[string]any{"mock-agent": map[string]any{"command": kandevBinary(t), "args": []string{"agent", "mock"}}}),
		func(c *Config) { c.ForgesFile = forges })
	op := e.wsClient(e.token, nil)
	ctx := context.Background()
	var r kanban.Repository
	must(t, op.Call(ctx, kanban.ActionRepositoryCreate, action.RepositoryCreateIn{LocalPath: repo, RemoteURL: remote.URL}, &r))
	task, sid := e.startMock("Ship it", "Edit.\n@write src/answer.go package answer\n@say done",
		map[string]any{"repository_id": r.ID, "executor_profile_id": e.executorProfileNamed("exec-worktree")})
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "done")
	// The seeded workflow takes the task to Review when the turn ends;
	// a merged pull request takes it on to Done (from In Progress too,
	// should a turn start meanwhile).
	review := e.stepNamed(op, task.ID, "Review")
	waitFor(t, func() bool { return e.task(task.ID).WorkflowStepID == review })
	onMergedToDone(t, e, op, review)
	onMergedToDone(t, e, op, e.stepNamed(op, task.ID, "In Progress"))

	agent := e.wsClient(e.sessionMCP(kanban.ModeTask, task.ID).Token, nil)
	for _, a := range []kanban.Action{kanban.ActionTaskCommit, kanban.ActionTaskPush, kanban.ActionTaskPROpen} {
		err := agent.Call(ctx, a, map[string]any{"task_id": task.ID, "message": "m", "title": "t"}, nil)
		if kanban.ErrorCode(err) != kanban.CodeForbidden {
			t.Fatalf("a session's %s: %v, want FORBIDDEN", a, err)
		}
	}
	var c action.CommitOut
	must(t, op.Call(ctx, kanban.ActionTaskCommit, action.CommitIn{TaskID: task.ID, Message: "Add answer"}, &c))
	var p action.PushOut
	must(t, op.Call(ctx, kanban.ActionTaskPush, action.PushIn{TaskID: task.ID}, &p))
	if p.Status != "created" || remote.Ref(t, "refs/heads/"+c.Branch) != c.Commit.SHA {
		t.Fatalf("push: %+v", p)
	}
	gh.SetBranch("octo-org", "demo", c.Branch, c.Commit.SHA)
	gh.SetBranch("octo-org", "demo", "main", strings.TrimSpace(gitOut(t, repo, "rev-parse", "main")))
	var pr kanban.PullRequest
	must(t, op.Call(ctx, kanban.ActionTaskPROpen, action.PROpenIn{TaskID: task.ID, Title: "Add answer"}, &pr))
	gh.SetChecks("octo-org", "demo", c.Commit.SHA, forgetest.CheckRun{Name: "ci", Status: "completed", Conclusion: "success"})
	gh.AddReview("octo-org", "demo", pr.Number, forgetest.Review{User: "rev", State: "APPROVED", CommitID: c.Commit.SHA})
	must(t, op.Call(ctx, kanban.ActionTaskPRGet, action.PRRefIn{ID: pr.ID}, &pr))
	if pr.Checks != kanban.ChecksPassing || pr.Review != kanban.ReviewApproved {
		t.Fatalf("read: checks %s, review %s", pr.Checks, pr.Review)
	}
	must(t, op.Call(ctx, kanban.ActionTaskPRMerge, action.PRMergeIn{ID: pr.ID, Method: "rebase"}, &pr))
	done := e.stepNamed(op, task.ID, "Done")
	waitFor(t, func() bool { return e.task(task.ID).WorkflowStepID == done })
	if strings.Contains(e.logs.String(), e2eToken) {
		t.Fatal("the log holds the forge token")
	}
}

// onMergedToDone adds to step stepID an on_pr_merged automation that
// moves the task to the workflow's Done step (keeping its other events).
func onMergedToDone(t *testing.T, e *env, op *ws.Client, stepID string) {
	t.Helper()
	ctx := context.Background()
	var step kanban.WorkflowStep
	must(t, op.Call(ctx, kanban.ActionWorkflowStepGet, map[string]any{"id": stepID}, &step))
	events := map[string]any{}
	for k, v := range step.Events {
		events[k] = v
	}
	events[kanban.EventPRMerged] = []map[string]any{{"type": "move_to_step", "config": map[string]any{"step_id": e.stepNamedIn(op, step.WorkflowID, "Done")}}}
	must(t, op.Call(ctx, kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": stepID, "events": events}, nil))
}

func (e *env) stepNamed(op *ws.Client, taskID, name string) string {
	return e.stepNamedIn(op, e.task(taskID).WorkflowID, name)
}

func (e *env) stepNamedIn(op *ws.Client, workflowID, name string) string {
	e.t.Helper()
	var steps kanban.List[kanban.WorkflowStep]
	must(e.t, op.Call(context.Background(), kanban.ActionWorkflowStepList, map[string]any{"workflow_id": workflowID}, &steps))
	for _, s := range steps.Items {
		if s.Name == name {
			return s.ID
		}
	}
	e.t.Fatalf("no step %q", name)
	return ""
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
