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
		{"two locators", TaskBranchIn{LocalPath: "/src/a", RepositoryURL: "https://x/a.git", BaseBranch: "main"}, "provide at most one of repository_id, local_path, repository_url"},
		{"no locator and no repository", TaskBranchIn{BaseBranch: "main"}, "provide one of repository_id, local_path, repository_url (the task does not have exactly one repository)"},
	} {
		if got := h.refuse(sess, kanban.ActionTaskRepositoryAdd, tc.in, kanban.CodeValidation); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	h.refuse(sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{TaskID: sib.ID, LocalPath: "/src/a", BaseBranch: "main"}, kanban.CodeForbidden)

	out := call[TaskBranchOut](h, sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{LocalPath: "/src/a", BaseBranch: "develop", CheckoutBranch: "feat/x"})
	if !out.RepositoryCreated || out.Repository.LocalPath != "/src/a" || out.TaskRepository.TaskID != me.ID ||
		out.TaskRepository.BaseBranch != "develop" || out.TaskRepository.CheckoutBranch != "feat/x" {
		t.Fatalf("task.repository.add: got %+v, want a new repository linked to the task", out)
	}
	again := call[TaskBranchOut](h, sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{TaskID: kid.ID, RepositoryID: out.Repository.ID})
	if again.RepositoryCreated || again.TaskRepository.TaskID != kid.ID || again.TaskRepository.BaseBranch != "main" {
		t.Errorf("task.repository.add by id on a subtask: got %+v, want the same repository linked to the kid from its default branch", again)
	}
	// Without a locator, the task's only repository.
	only := call[TaskBranchOut](h, sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{CheckoutBranch: "feat/y"})
	if only.Repository.ID != out.Repository.ID || only.TaskRepository.BaseBranch != "main" || only.TaskRepository.CheckoutBranch != "feat/y" {
		t.Errorf("task.repository.add without a locator: got %+v, want the task's only repository updated", only)
	}
	call[TaskBranchOut](h, sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{BaseBranch: "develop", CheckoutBranch: "feat/x"})
	if n := h.count("repositories"); n != 1 {
		t.Errorf("repositories: got %d, want 1", n)
	}
	_, _, elsewhere := h.otherBoard()
	repo, err := h.st.CreateRepository(context.Background(), kanban.Repository{WorkspaceID: elsewhere.WorkspaceID, LocalPath: "/other"})
	if err != nil {
		t.Fatal(err)
	}
	h.refuse(sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{RepositoryID: repo.ID, BaseBranch: "main"}, kanban.CodeForbidden)

	// Changing the base branch keeps the checkout branch.
	set := call[kanban.TaskRepository](h, sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{BaseBranch: "release"})
	if set.BaseBranch != "release" || set.CheckoutBranch != "feat/x" || set.RepositoryID != out.Repository.ID {
		t.Errorf("set_base_branch: got %+v, want release keeping feat/x", set)
	}
	h.refuse(sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{RepositoryID: repo.ID, BaseBranch: "x"}, kanban.CodeNotFound)
	h.refuse(sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{TaskID: sib.ID, BaseBranch: "x"}, kanban.CodeForbidden)
	byLink := call[kanban.TaskRepository](h, sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{TaskRepositoryID: out.Repository.ID, BaseBranch: "rc"})
	if byLink.BaseBranch != "rc" {
		t.Errorf("set_base_branch by task_repository_id: got %+v", byLink)
	}
	h.refuse(sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{TaskRepositoryID: out.Repository.ID, RepositoryID: repo.ID, BaseBranch: "x"}, kanban.CodeValidation)
	call[TaskBranchOut](h, sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{RepositoryURL: "https://example.com/b.git", BaseBranch: "main"})
	if msg := h.refuse(sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{BaseBranch: "x"}, kanban.CodeValidation); !strings.Contains(msg, "several") {
		t.Errorf("set_base_branch without repository_id on two repositories: got %q", msg)
	}
}

func TestAddWorkspaceSources(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	me := h.task("me")
	sess := h.session(me, kanban.ModeTask)
	repo := func(src SourceIn) SourceIn { src.Kind = kanban.SourceRepository; return src }
	for _, tc := range []struct {
		name string
		in   SourcesAddIn
		code kanban.Code
	}{
		{"no kind", SourcesAddIn{Sources: []SourceIn{{LocalPath: "/a"}}}, kanban.CodeValidation},
		{"no locator", SourcesAddIn{Sources: []SourceIn{repo(SourceIn{LocalPath: "/a"}), repo(SourceIn{BaseBranch: "x"})}}, kanban.CodeValidation},
		{"two locators", SourcesAddIn{Sources: []SourceIn{repo(SourceIn{LocalPath: "/a", RemoteURL: "https://x/a.git"})}}, kanban.CodeValidation},
		{"repeat", SourcesAddIn{Sources: []SourceIn{repo(SourceIn{LocalPath: "/a"}), repo(SourceIn{LocalPath: "/a"})}}, kanban.CodeValidation},
		{"not github", SourcesAddIn{Sources: []SourceIn{repo(SourceIn{GitHubURL: "https://gitlab.com/a/b"})}}, kanban.CodeValidation},
		{"relative folder", SourcesAddIn{Sources: []SourceIn{{Kind: kanban.SourceFolder, LocalPath: "docs"}}}, kanban.CodeValidation},
		{"folder with a branch", SourcesAddIn{Sources: []SourceIn{{Kind: kanban.SourceFolder, LocalPath: "/docs", BaseBranch: "main"}}}, kanban.CodeValidation},
		{"unknown repository", SourcesAddIn{Sources: []SourceIn{repo(SourceIn{RepositoryID: kanban.NewID()})}}, kanban.CodeNotFound},
		{"sibling task", SourcesAddIn{TaskID: h.task("sibling").ID, Sources: []SourceIn{repo(SourceIn{LocalPath: "/a"})}}, kanban.CodeForbidden},
	} {
		h.refuse(sess, kanban.ActionWorkspaceSourceAdd, tc.in, tc.code)
		if n := h.count("repositories"); n != 0 {
			t.Fatalf("%s: a refused call registered %d repositories", tc.name, n)
		}
	}

	in := SourcesAddIn{Sources: []SourceIn{repo(SourceIn{LocalPath: "/src/api", BaseBranch: "trunk"}),
		repo(SourceIn{GitHubURL: "https://github.com/acme/web", CheckoutBranch: "pr-7"}), {Kind: kanban.SourceFolder, LocalPath: "/srv/docs", DisplayName: "Docs"}}}
	out := call[SourcesAddOut](h, sess, kanban.ActionWorkspaceSourceAdd, in)
	if out.TaskID != me.ID || len(out.Items) != 3 || !out.Items[0].Created || out.Items[0].TaskRepository.BaseBranch != "trunk" ||
		out.Items[1].Repository.RemoteURL != "https://github.com/acme/web" || out.Items[1].TaskRepository.CheckoutBranch != "pr-7" ||
		out.Items[2].Kind != kanban.SourceFolder || out.Items[2].Repository.Name != "Docs" {
		t.Fatalf("workspace.source.add: got %+v, want three sources attached to the task", out)
	}
	links, err := h.st.ListTaskRepositories(context.Background(), me.ID)
	if err != nil || len(links) != 3 {
		t.Fatalf("task links: got %d, %v, want 3", len(links), err)
	}
	again := call[SourcesAddOut](h, sess, kanban.ActionWorkspaceSourceAdd, in)
	if again.Items[0].Created || again.Items[0].Repository.ID != out.Items[0].Repository.ID || h.count("repositories") != 3 {
		t.Errorf("an exact retry: got %+v, want the same sources, created false", again)
	}
	byID := call[SourcesAddOut](h, sess, kanban.ActionWorkspaceSourceAdd, SourcesAddIn{TaskID: h.child(me, "kid").ID,
		Sources: []SourceIn{repo(SourceIn{RepositoryID: out.Items[0].Repository.ID})}})
	if byID.Items[0].Created || byID.Items[0].TaskRepository.BaseBranch != "main" {
		t.Errorf("by repository_id on a subtask: got %+v, want linked from the default branch", byID)
	}
}
