package action

import (
	"context"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestAddBranchToTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	me := h.task("me")
	kid := h.child(me, "kid")
	sib := h.task("sibling")
	sess := h.session(me, kanban.ModeTask)
	for _, tc := range []struct {
		name string
		in   TaskBranchIn
		want string
	}{
		{"two locators", TaskBranchIn{LocalPath: "/src/a", RepositoryURL: "https://x/a.git", Branch: "main"}, "provide at most one of repository_id, local_path, repository_url"},
		{"no locator", TaskBranchIn{Branch: "main"}, "provide one of repository_id, local_path, repository_url"},
		{"no branch", TaskBranchIn{LocalPath: "/src/a"}, "branch: is required"},
		{"long branch", TaskBranchIn{LocalPath: "/src/a", Branch: strings.Repeat("b", maxBranchLen+1)}, "branch: longer than 255 characters"},
	} {
		if got := h.refuse(sess, "task.repository.add", tc.in, kanban.CodeValidation); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	h.refuse(sess, "task.repository.add", TaskBranchIn{TaskID: sib.ID, LocalPath: "/src/a", Branch: "main"}, kanban.CodeForbidden)

	out := call[TaskBranchOut](h, sess, "task.repository.add", TaskBranchIn{LocalPath: "/src/a", Branch: "develop", CheckoutBranch: "feat/x"})
	if !out.RepositoryCreated || out.Repository.LocalPath != "/src/a" || out.TaskRepository.TaskID != me.ID ||
		out.TaskRepository.BaseBranch != "develop" || out.TaskRepository.CheckoutBranch != "feat/x" {
		t.Fatalf("task.repository.add: got %+v, want a new repository linked to the task", out)
	}
	again := call[TaskBranchOut](h, sess, "task.repository.add", TaskBranchIn{TaskID: kid.ID, RepositoryID: out.Repository.ID, Branch: "main"})
	if again.RepositoryCreated || again.TaskRepository.TaskID != kid.ID {
		t.Errorf("task.repository.add by id on a subtask: got %+v, want the same repository linked to the kid", again)
	}
	if n := h.count("repositories"); n != 1 {
		t.Errorf("repositories: got %d, want 1", n)
	}
	_, _, elsewhere := h.otherBoard()
	repo, err := h.st.CreateRepository(context.Background(), kanban.Repository{WorkspaceID: elsewhere.WorkspaceID, LocalPath: "/other"})
	if err != nil {
		t.Fatal(err)
	}
	h.refuse(sess, "task.repository.add", TaskBranchIn{RepositoryID: repo.ID, Branch: "main"}, kanban.CodeForbidden)

	// Changing the base branch keeps the checkout branch.
	set := call[kanban.TaskRepository](h, sess, "task.repository.set_base_branch", BaseBranchIn{BaseBranch: "release"})
	if set.BaseBranch != "release" || set.CheckoutBranch != "feat/x" || set.RepositoryID != out.Repository.ID {
		t.Errorf("set_base_branch: got %+v, want release keeping feat/x", set)
	}
	h.refuse(sess, "task.repository.set_base_branch", BaseBranchIn{RepositoryID: repo.ID, BaseBranch: "x"}, kanban.CodeNotFound)
	h.refuse(sess, "task.repository.set_base_branch", BaseBranchIn{TaskID: sib.ID, BaseBranch: "x"}, kanban.CodeForbidden)
	call[TaskBranchOut](h, sess, "task.repository.add", TaskBranchIn{RepositoryURL: "https://example.com/b.git", Branch: "main"})
	if msg := h.refuse(sess, "task.repository.set_base_branch", BaseBranchIn{BaseBranch: "x"}, kanban.CodeValidation); !strings.Contains(msg, "several") {
		t.Errorf("set_base_branch without repository_id on two repositories: got %q", msg)
	}
}

func TestAddWorkspaceSources(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sess := h.session(h.task("me"), kanban.ModeTask)
	h.refuse(sess, "workspace.source.add", SourcesAddIn{}, kanban.CodeValidation)
	h.refuse(sess, "workspace.source.add", SourcesAddIn{Sources: make([]SourceIn, maxSourcesCall+1)}, kanban.CodeValidation)
	h.refuse(sess, "workspace.source.add", SourcesAddIn{Sources: []SourceIn{{LocalPath: "/a"}, {Name: "no locator"}}}, kanban.CodeValidation)
	h.refuse(sess, "workspace.source.add", SourcesAddIn{Sources: []SourceIn{{LocalPath: "/a"}, {LocalPath: "/a"}}}, kanban.CodeValidation)
	other, _, _ := h.otherBoard()
	h.refuse(sess, "workspace.source.add", SourcesAddIn{WorkspaceID: other.ID, Sources: []SourceIn{{LocalPath: "/a"}}}, kanban.CodeForbidden)

	out := call[SourcesAddOut](h, sess, "workspace.source.add", SourcesAddIn{Sources: []SourceIn{
		{LocalPath: "/src/api", DefaultBranch: "trunk"}, {RepositoryURL: "https://example.com/web.git", Name: "web"}}})
	if len(out.Items) != 2 || !out.Items[0].Created || out.Items[0].Repository.DefaultBranch != "trunk" || out.Items[1].Repository.Name != "web" {
		t.Fatalf("workspace.source.add: got %+v, want two new repositories", out)
	}
	again := call[SourcesAddOut](h, sess, "workspace.source.add", SourcesAddIn{Sources: []SourceIn{{LocalPath: "/src/api"}}})
	if again.Items[0].Created || again.Items[0].Repository.ID != out.Items[0].Repository.ID {
		t.Errorf("adding a known source: got %+v, want the existing repository, created false", again)
	}
}
