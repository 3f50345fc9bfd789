package store

import (
	"context"
	"slices"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestListPullRequestBadges: the badges of a workspace's tasks' pull requests,
// page by page, by id; not another workspace's, not an
// archived task's; NOT_FOUND for an unknown workspace.
func TestListPullRequestBadges(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t)
		ctx := context.Background()
		f := newPRFixture(t, s)
		second := mustTask(t, s, f.b, "", "Second")
		must(s.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: second.ID, RepositoryID: f.repo.ID}))(t)
		archived := mustTask(t, s, f.b, "", "Archived")
		must(s.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: archived.ID, RepositoryID: f.repo.ID}))(t)
		other := newPRFixture(t, s)
		var want []string
		for i, task := range []*kanban.Task{f.task, second, f.task, archived} {
			p := f.pr(i + 1)
			p.TaskID = task.ID
			got := must(s.LinkPullRequest(ctx, p))(t)
			if task != archived {
				want = append(want, got.ID)
			}
		}
		must(s.LinkPullRequest(ctx, other.pr(9)))(t)
		must(s.ArchiveTask(ctx, archived.ID))(t)

		var got []string
		page := kanban.Page{Limit: 2}
		for range 3 {
			l := must(s.ListPullRequestBadges(ctx, f.b.ws.ID, page))(t)
			for _, p := range l.Items {
				if p.Number == 0 || p.State != kanban.PROpen || p.Checks != kanban.ChecksNone || p.TaskID == "" || p.UpdatedAt.IsZero() {
					t.Fatalf("badge %+v", p)
				}
				got = append(got, p.ID)
			}
			if l.NextCursor == "" {
				break
			}
			page.Cursor = l.NextCursor
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if _, err := s.ListPullRequestBadges(ctx, kanban.NewID(), kanban.Page{}); kanban.ErrorCode(err) != kanban.CodeNotFound {
			t.Fatalf("unknown workspace: %v, want NOT_FOUND", err)
		}
	})
}
