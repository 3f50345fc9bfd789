package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardShipFromChangesTab: in a real Chromium, the Changes tab's
// Commit, Push and Open pull request controls commit the mock agent's
// edit on the task branch, push it to a bare remote served by git
// http-backend (Basic auth checked) and open a pull request on the
// Prism-backed GitHub API (request validation on; the test tells its
// stateful layer the pushed branch exists), which the tab then lists
// with its state, checks and review.
func TestBoardShipFromChangesTab(t *testing.T) {
	gh := mockForge(t)
	remote := gittest.NewRemote(t, gittest.RemoteOptions{Token: e2eToken})
	repo := gitRepo(t)
	gitOut(t, repo, "push", "-q", remote.Dir, "main")
	secret := filepath.Join(t.TempDir(), "github-token")
	forges := filepath.Join(t.TempDir(), "forges.json")
	writeFile(t, secret, e2eToken+"\n")
	writeFile(t, forges, `{"repositories":[{"remote_url":"`+remote.URL+`","forge":"github","api_url":"`+gh.URL+`",
		"forge_repo":"octo-org/demo","token_file":"`+secret+`"}]}`)
	e := newAgentEnv(t, func(c *Config) { c.ForgesFile = forges })
	op := e.wsClient(e.token, nil)
	ctx := context.Background()
	var r kanban.Repository
	must(t, op.Call(ctx, kanban.ActionRepositoryCreate, action.RepositoryCreateIn{LocalPath: repo, RemoteURL: remote.URL}, &r))
	task, sid := e.startMock("Ship it", "Edit.\n@write src/answer.go package answer\n@say done",
		map[string]any{"repository_id": r.ID, "executor_profile_id": e.executorProfileNamed("exec-worktree")})
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "done")
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+task.ID, "task")
	b.click("#tab-changes")
	b.until("the ship controls", `document.querySelector('#panel-changes details.ship')`)
	b.js(`document.querySelector('#panel-changes details.ship').open = true`, nil)
	b.set("#panel-changes .ship-commit [name=message]", "Add answer")
	b.click("#panel-changes .ship-commit button.primary")
	b.until("the commit", `(document.querySelector('#panel-changes .ship-status') || {}).textContent?.startsWith('Committed ')`)
	b.until("the file listed as committed", `(document.querySelector('#panel-changes .file[data-path="src/answer.go"]') || {}).textContent?.includes('committed')`)
	var commits action.CommitsOut
	must(t, op.Call(ctx, kanban.ActionTaskChangesCommits, action.ChangesIn{TaskID: task.ID}, &commits))
	if len(commits.Items) != 1 || commits.Items[0].Subject != "Add answer" {
		t.Fatalf("commits on the task branch: %+v", commits.List)
	}
	b.click("#panel-changes .ship-push")
	b.until("the push", fmt.Sprintf(`(document.querySelector('#panel-changes .ship-status') || {}).textContent === %q`, "Pushed "+commits.Branch+": Created"))
	if got := remote.Ref(t, "refs/heads/"+commits.Branch); got != commits.Items[0].SHA {
		t.Fatalf("the remote's branch: %s, want %s", got, commits.Items[0].SHA)
	}
	gh.SetBranch("octo-org", "demo", commits.Branch, commits.Items[0].SHA)
	gh.SetBranch("octo-org", "demo", "main", strings.TrimSpace(gitOut(t, repo, "rev-parse", "main")))
	b.set("#panel-changes .ship-pr [name=title]", "Add answer")
	b.click("#panel-changes .ship-pr button.primary")
	b.until("the pull request listed", `(document.querySelector('#task-prs .pr[data-state=open]') || {}).textContent?.includes('Checks:')`)
	var prs kanban.List[kanban.PullRequest]
	must(t, op.Call(ctx, kanban.ActionTaskPRList, action.PRListIn{TaskID: task.ID}, &prs))
	if len(prs.Items) != 1 || !strings.Contains(b.str(`document.querySelector('#task-prs .pr a').textContent`), fmt.Sprintf("#%d Add answer", prs.Items[0].Number)) {
		t.Fatalf("pull requests: %+v", prs.Items)
	}
}
