package action

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// task.pr.list of a workspace (the board's card badges): the pull
// requests of its tasks that are not archived, paginated; refused to a
// session (operator only, like the task's listing), with both or neither
// of task_id and workspace_id, and for an unknown workspace.
func TestPRListOfAWorkspace(t *testing.T) {
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
	page := call[kanban.List[kanban.PullRequest]](f.harness, operator, kanban.ActionTaskPRList, map[string]any{"workspace_id": f.ws, "limit": 1})
	if len(page.Items) != 1 || page.Items[0].ID != first.ID || page.NextCursor == "" {
		t.Fatalf("first page: %+v", page)
	}
	rest := call[kanban.List[kanban.PullRequest]](f.harness, operator, kanban.ActionTaskPRList,
		map[string]any{"workspace_id": f.ws, "limit": 1, "cursor": page.NextCursor})
	if len(rest.Items) != 1 || rest.Items[0].ID != second.ID || rest.NextCursor != "" {
		t.Fatalf("second page (the archived task's left out): %+v", rest)
	}
	f.refuse(f.session(f.task, kanban.ModeTask), kanban.ActionTaskPRList, map[string]any{"workspace_id": f.ws}, kanban.CodeForbidden)
	f.refuse(operator, kanban.ActionTaskPRList, map[string]any{"workspace_id": f.ws, "task_id": f.task.ID}, kanban.CodeValidation)
	f.refuse(operator, kanban.ActionTaskPRList, map[string]any{}, kanban.CodeValidation)
	f.refuse(operator, kanban.ActionTaskPRList, map[string]any{"workspace_id": kanban.NewID()}, kanban.CodeNotFound)
}
