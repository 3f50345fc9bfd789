package worktree

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestCommitsPaginated(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	// A commit on main after branching is not the task's.
	f.repo.Git(t, "commit", "--quiet", "--allow-empty", "-m", "main only")
	for i := 1; i <= 5; i++ {
		f.write(t, "f.txt", strconv.Itoa(i)+"\n")
		if _, err := f.tree.Commit(t.Context(), CommitRequest{Message: "task " + strconv.Itoa(i) + "\n\nbody"}); err != nil {
			t.Fatal(err)
		}
	}
	var subjects []string
	page := kanban.Page{Limit: 2}
	for i := 0; ; i++ {
		got, err := f.tree.Commits(t.Context(), page)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got.Items {
			subjects = append(subjects, c.Subject)
			if c.AuthorEmail != testIdentity.Email || c.AuthoredAt.IsZero() || len(c.Parents) != 1 || len(c.SHA) != 40 {
				t.Fatalf("got %+v, want identity, time, one parent and a full sha", c)
			}
		}
		if i == 0 {
			// A commit arriving between pages does not shift the list.
			f.write(t, "f.txt", "later\n")
			if _, err := f.tree.Commit(t.Context(), CommitRequest{Message: "task 6"}); err != nil {
				t.Fatal(err)
			}
		}
		if got.NextCursor == "" {
			break
		}
		page.Cursor = got.NextCursor
	}
	want := []string{"task 5", "task 4", "task 3", "task 2", "task 1"}
	if diff := cmp.Diff(want, subjects); diff != "" {
		t.Fatalf("subjects (-want +got):\n%s", diff)
	}
	first, err := f.tree.Commits(t.Context(), kanban.Page{Limit: 1})
	if err != nil || len(first.Items) != 1 || first.Items[0].Subject != "task 6" {
		t.Fatalf("got %+v, %v; want the newest commit first", first, err)
	}
	for _, bad := range []string{"x", "a.b.c", first.Items[0].SHA + "." + first.Items[0].SHA + ".-1", "../x.y.1"} {
		_, err := f.tree.Commits(t.Context(), kanban.Page{Cursor: bad})
		wantRefusal(t, err, kanban.CodeValidation, "../x")
	}
	gone := "0123456789012345678901234567890123456789"
	_, err = f.tree.Commits(t.Context(), kanban.Page{Cursor: gone + "." + gone + ".2"})
	wantRefusal(t, err, kanban.CodeValidation)
}

func TestCommitsNoneYet(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	got, err := f.tree.Commits(t.Context(), kanban.Page{})
	if err != nil || len(got.Items) != 0 || got.NextCursor != "" {
		t.Fatalf("got %+v, %v; want an empty list", got, err)
	}
}
