package app

import (
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardShowsCloneProgress: in a real Chromium, the task page of a
// task whose repository is known only by its remote URL (served by git
// http-backend on loopback) shows the clone its first exec-worktree
// session makes, from the repository.clone_progress events, as text.
func TestBoardShowsCloneProgress(t *testing.T) {
	remote := servedRemote(t, "shown.git", "", map[string]string{"README.md": "# shown\n"})
	e := newAgentEnv(t)
	var repo kanban.Repository
	ws := e.newTask("Workspace probe").WorkspaceID
	e.dispatch(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{WorkspaceID: ws, Name: "shown", RemoteURL: remote.URL, DefaultBranch: "main"}, &repo)
	var created action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Cloned", "repository_id": repo.ID, "start_agent": false}, &created)
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+created.Task.ID, "task")
	sid := e.spawnMock(created.Task.ID, "@say cloned")
	b.until("the clone shown done", `(document.querySelector('#task-clone') || {}).textContent === 'Repository cloned for this task.'`)
	e.waitState(sid, kanban.SessionIdle)
	if n := fetchCount(remote.Requests()); n != 1 {
		t.Fatalf("got %d fetches, want 1", n)
	}
}
