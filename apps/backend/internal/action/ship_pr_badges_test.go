package action

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// task.pr.badges (the board's card badges): those of the pull requests of
// a workspace's tasks that are not archived, paginated; refused to a
// session (operator only, like task.pr.list), without a workspace, and
// for an unknown workspace.
func TestPRBadgesOfAWorkspace(t *testing.T) {
	f := newShipFix(t, shipEntry(t, kanban.ForgeGitHub, "", shipOwner+"/"+shipRepo))
	ctx := context.Background()
	link := func(task *kanban.Task, n int) *kanban.PullRequest {
		if _, err := f.st.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: f.repoID, BaseBranch: "main"}); err != nil {
			t.Fatal(err)
		}
		pr, err := f.st.LinkPullRequest(ctx, kanban.PullRequest{TaskID: task.ID, RepositoryID: f.repoID, Forge: kanban.ForgeGitHub,
			ForgeRepo: shipOwner + "/" + shipRepo, Number: n, URL: "https://github.com/octo-org/demo.app/pull/1", State: kanban.PROpen})
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	first, second := link(f.task, 1), link(f.harness.task("second"), 2)
	archived := f.harness.task("archived")
	link(archived, 3)
	if _, err := f.st.ArchiveTask(ctx, archived.ID); err != nil {
		t.Fatal(err)
	}
	page := call[kanban.List[kanban.PullRequestBadge]](f.harness, operator, kanban.ActionTaskPRBadges, map[string]any{"workspace_id": f.ws, "limit": 1})
	rest := call[kanban.List[kanban.PullRequestBadge]](f.harness, operator, kanban.ActionTaskPRBadges,
		map[string]any{"workspace_id": f.ws, "limit": 1, "cursor": page.NextCursor})
	if len(page.Items) != 1 || page.NextCursor == "" || len(rest.Items) != 1 || rest.NextCursor != "" {
		t.Fatalf("pages %+v then %+v, want one badge each (the archived task's left out)", page, rest)
	}
	got := map[string]kanban.PullRequestBadge{page.Items[0].ID: page.Items[0], rest.Items[0].ID: rest.Items[0]}
	if b := got[first.ID]; b.Number != 1 || b.State != kanban.PROpen || b.TaskID != f.task.ID || got[second.ID].Number != 2 {
		t.Fatalf("badges %+v", got)
	}
	f.refuse(f.session(f.task, kanban.ModeTask), kanban.ActionTaskPRBadges, map[string]any{"workspace_id": f.ws}, kanban.CodeForbidden)
	f.refuse(operator, kanban.ActionTaskPRBadges, map[string]any{"workspace_id": f.ws, "task_id": f.task.ID}, kanban.CodeValidation)
	f.refuse(operator, kanban.ActionTaskPRBadges, map[string]any{}, kanban.CodeValidation)
	f.refuse(operator, kanban.ActionTaskPRBadges, map[string]any{"workspace_id": kanban.NewID()}, kanban.CodeNotFound)
}
