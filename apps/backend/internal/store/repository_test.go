package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestRepositoryCRUD(t *testing.T) {
	t.Parallel()
	bothEngines(t, testRepositoryCRUD)
}

func testRepositoryCRUD(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	r, err := s.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.ws.ID, LocalPath: "/src/kandev/"})
	if err != nil || r.Name != "kandev" || r.DefaultBranch != "main" {
		t.Fatalf("got %+v, %v; want name kandev, default branch main", r, err)
	}
	u, err := s.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.ws.ID, RemoteURL: "git@github.com:org/tool.git", DefaultBranch: "dev"})
	if err != nil || u.Name != "tool" || u.DefaultBranch != "dev" {
		t.Fatalf("got %+v, %v; want name tool, default branch dev", u, err)
	}
	got, err := s.GetRepository(ctx, r.ID)
	if err != nil || got.LocalPath != "/src/kandev/" {
		t.Fatalf("got %+v, %v; want the stored repository", got, err)
	}
	found, err := s.FindRepository(ctx, b.ws.ID, "", "git@github.com:org/tool.git")
	if err != nil || found.ID != u.ID {
		t.Fatalf("got %+v, %v; want repository %s", found, err, u.ID)
	}
	_, err = s.FindRepository(ctx, b.ws.ID, "/elsewhere", "")
	wantCode(t, err, kanban.CodeNotFound)
	_, err = s.FindRepository(ctx, b.ws.ID, "", "")
	wantCode(t, err, kanban.CodeValidation)
	branch := "trunk"
	up, err := s.UpdateRepository(ctx, r.ID, &branch)
	if err != nil || up.DefaultBranch != "trunk" {
		t.Fatalf("got %+v, %v; want default branch trunk", up, err)
	}
	empty := ""
	_, err = s.UpdateRepository(ctx, r.ID, &empty)
	wantCode(t, err, kanban.CodeValidation)
	_, err = s.UpdateRepository(ctx, "missing", &branch)
	wantCode(t, err, kanban.CodeNotFound)
	_, err = s.GetRepository(ctx, "missing")
	wantCode(t, err, kanban.CodeNotFound)
}

func TestCreateRepositoryRejects(t *testing.T) {
	t.Parallel()
	bothEngines(t, testCreateRepositoryRejects)
}

func testCreateRepositoryRejects(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	if _, err := s.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.ws.ID, LocalPath: "/a"}); err != nil {
		t.Fatalf("create: %v", err)
	}
	before := snapshot(t, s)
	cases := []struct {
		name string
		r    kanban.Repository
		code kanban.Code
	}{
		{"no workspace", kanban.Repository{LocalPath: "/b"}, kanban.CodeValidation},
		{"unknown workspace", kanban.Repository{WorkspaceID: "nope", LocalPath: "/b"}, kanban.CodeNotFound},
		{"no locator", kanban.Repository{WorkspaceID: b.ws.ID, Name: "x"}, kanban.CodeValidation},
		{"long name", kanban.Repository{WorkspaceID: b.ws.ID, LocalPath: "/b", Name: strings.Repeat("n", kanban.MaxNameLen+1)}, kanban.CodeValidation},
		{"duplicate path", kanban.Repository{WorkspaceID: b.ws.ID, LocalPath: "/a"}, kanban.CodeConflict},
	}
	for _, c := range cases {
		_, err := s.CreateRepository(ctx, c.r)
		if got := kanban.ErrorCode(err); got != c.code {
			t.Errorf("%s: got %v (%s), want %s", c.name, err, got, c.code)
		}
	}
	checkSnapshot(t, s, before)
}

func TestListRepositoriesPaginates(t *testing.T) {
	t.Parallel()
	bothEngines(t, testListRepositoriesPaginates)
}

func testListRepositoriesPaginates(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	other := newBoard(t, s, "Other")
	for i := range 5 {
		for _, ws := range []string{b.ws.ID, other.ws.ID} {
			if _, err := s.CreateRepository(ctx, kanban.Repository{WorkspaceID: ws, LocalPath: fmt.Sprintf("/r%d", i)}); err != nil {
				t.Fatalf("create: %v", err)
			}
		}
	}
	seen, cursor := map[string]bool{}, ""
	for {
		l, err := s.ListRepositories(ctx, b.ws.ID, kanban.Page{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		for _, r := range l.Items {
			if seen[r.ID] || r.WorkspaceID != b.ws.ID {
				t.Fatalf("got repository %+v, want each of the workspace's once", r)
			}
			seen[r.ID] = true
		}
		if cursor = l.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != 5 {
		t.Fatalf("got %d repositories, want 5", len(seen))
	}
	_, err := s.ListRepositories(ctx, "missing", kanban.Page{})
	wantCode(t, err, kanban.CodeNotFound)
}

func TestCreateTaskWithRepository(t *testing.T) {
	t.Parallel()
	bothEngines(t, testCreateTaskWithRepository)
}

func testCreateTaskWithRepository(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	other := newBoard(t, s, "Other")
	foreignRepo, _ := s.CreateRepository(ctx, kanban.Repository{WorkspaceID: other.ws.ID, LocalPath: "/x"})
	create := func(in *kanban.TaskRepositoryInput) (*kanban.Task, error) {
		task, _, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "t", Repository: in})
		return task, err
	}
	t1, err := create(&kanban.TaskRepositoryInput{LocalPath: "/src/app"})
	if err != nil {
		t.Fatalf("create with local path: %v", err)
	}
	links, err := s.ListTaskRepositories(ctx, t1.ID)
	if err != nil || len(links) != 1 || links[0].BaseBranch != "main" {
		t.Fatalf("got %+v, %v; want one link on base branch main", links, err)
	}
	repo, err := s.GetRepository(ctx, links[0].RepositoryID)
	if err != nil || repo.Name != "app" || repo.WorkspaceID != b.ws.ID {
		t.Fatalf("got %+v, %v; want repository app created in the workspace", repo, err)
	}
	t2, err := create(&kanban.TaskRepositoryInput{LocalPath: "/src/app", BaseBranch: "release"})
	if err != nil {
		t.Fatalf("create reusing path: %v", err)
	}
	if links, _ := s.ListTaskRepositories(ctx, t2.ID); len(links) != 1 || links[0].RepositoryID != repo.ID || links[0].BaseBranch != "release" {
		t.Fatalf("got %+v, want the existing repository on base branch release", links)
	}
	if _, err := create(&kanban.TaskRepositoryInput{RepositoryID: repo.ID}); err != nil {
		t.Fatalf("create by repository id: %v", err)
	}
	if n := countRows(t, s, "repositories"); n != 2 {
		t.Fatalf("got %d repositories, want 2 (one per workspace)", n)
	}
	before := snapshot(t, s)
	bad := []struct {
		in   *kanban.TaskRepositoryInput
		code kanban.Code
	}{
		{&kanban.TaskRepositoryInput{RepositoryID: repo.ID, LocalPath: "/src/app"}, kanban.CodeValidation},
		{&kanban.TaskRepositoryInput{LocalPath: "/a", RepositoryURL: "https://x/y"}, kanban.CodeValidation},
		{&kanban.TaskRepositoryInput{BaseBranch: "main"}, kanban.CodeValidation},
		{&kanban.TaskRepositoryInput{RepositoryID: "nope"}, kanban.CodeNotFound},
		{&kanban.TaskRepositoryInput{RepositoryID: foreignRepo.ID}, kanban.CodeValidation},
	}
	for i, c := range bad {
		_, err := create(c.in)
		if got := kanban.ErrorCode(err); got != c.code {
			t.Errorf("case %d: got %v (%s), want %s", i, err, got, c.code)
		}
	}
	_, err = create(bad[0].in)
	if !strings.Contains(err.Error(), "provide at most one of repository_id, local_path, repository_url") {
		t.Errorf("got %q, want the at-most-one-locator message", err)
	}
	checkSnapshot(t, s, before)
}

func TestSetTaskRepository(t *testing.T) {
	t.Parallel()
	bothEngines(t, testSetTaskRepository)
}

func testSetTaskRepository(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	other := newBoard(t, s, "Other")
	task := mustTask(t, s, b, "", "t")
	repo, _ := s.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.ws.ID, RemoteURL: "https://h/o/r", DefaultBranch: "dev"})
	foreign, _ := s.CreateRepository(ctx, kanban.Repository{WorkspaceID: other.ws.ID, RemoteURL: "https://h/o/r"})
	tr, err := s.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: repo.ID})
	if err != nil || tr.BaseBranch != "dev" {
		t.Fatalf("got %+v, %v; want base branch dev", tr, err)
	}
	tr, err = s.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: repo.ID, BaseBranch: "main", CheckoutBranch: "feat"})
	if err != nil || tr.CheckoutBranch != "feat" {
		t.Fatalf("got %+v, %v; want the link updated", tr, err)
	}
	links, err := s.ListTaskRepositories(ctx, task.ID)
	if err != nil || len(links) != 1 || links[0].BaseBranch != "main" || links[0].CheckoutBranch != "feat" {
		t.Fatalf("got %+v, %v; want one link main/feat", links, err)
	}
	_, err = s.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: foreign.ID})
	wantCode(t, err, kanban.CodeValidation)
	_, err = s.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: "missing", RepositoryID: repo.ID})
	wantCode(t, err, kanban.CodeNotFound)
	_, err = s.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: "missing"})
	wantCode(t, err, kanban.CodeNotFound)
	_, err = s.ListTaskRepositories(ctx, "missing")
	wantCode(t, err, kanban.CodeNotFound)
	if err := s.DeleteTask(ctx, task.ID); err != nil {
		t.Fatalf("delete task: %v", err)
	}
	if n := countRows(t, s, "task_repositories"); n != 0 {
		t.Fatalf("got %d links after deleting the task, want 0", n)
	}
}
