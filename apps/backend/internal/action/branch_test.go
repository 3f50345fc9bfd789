package action

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// realDir is a fresh directory, by its canonical path.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkRepositoryAddRefusals checks task.repository.add's refusals, which
// register nothing: locators, another task, a session registering, a
// protected path.
func checkRepositoryAddRefusals(t *testing.T, h *harness, sess Principal, sib, me *kanban.Task, src string) {
	t.Helper()
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
	h.refuse(sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{TaskID: sib.ID, LocalPath: src, BaseBranch: "main"}, kanban.CodeForbidden)
	// A session registers nothing: only the operator does, and the
	// canonical path is stored.
	if msg := h.refuse(sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{LocalPath: src, BaseBranch: "main"}, kanban.CodeForbidden); !strings.Contains(msg, "registering a new repository or folder is for the operator") {
		t.Errorf("a session registering: got %q", msg)
	}
	if msg := h.refuse(operator, kanban.ActionTaskRepositoryAdd, TaskBranchIn{TaskID: me.ID, LocalPath: "/etc", BaseBranch: "main"}, kanban.CodeValidation); !strings.Contains(msg, "local_path: is, contains or lies inside a path Kandev protects") {
		t.Errorf("the operator registering /etc: got %q", msg)
	}
	if n := h.count("repositories"); n != 0 {
		t.Fatalf("refused calls registered %d repositories", n)
	}
}

// checkSetBaseBranch: changing the base branch keeps the checkout branch;
// another workspace's repository (foreign) or task is refused, and so is
// no repository_id once the task has two.
func checkSetBaseBranch(t *testing.T, h *harness, sess Principal, sib *kanban.Task, linked, foreign string) {
	t.Helper()
	set := call[kanban.TaskRepository](h, sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{BaseBranch: "release"})
	if set.BaseBranch != "release" || set.CheckoutBranch != "feat/x" || set.RepositoryID != linked {
		t.Errorf("set_base_branch: got %+v, want release keeping feat/x", set)
	}
	h.refuse(sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{RepositoryID: foreign, BaseBranch: "x"}, kanban.CodeNotFound)
	h.refuse(sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{TaskID: sib.ID, BaseBranch: "x"}, kanban.CodeForbidden)
	byLink := call[kanban.TaskRepository](h, sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{TaskRepositoryID: linked, BaseBranch: "rc"})
	if byLink.BaseBranch != "rc" {
		t.Errorf("set_base_branch by task_repository_id: got %+v", byLink)
	}
	h.refuse(sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{TaskRepositoryID: linked, RepositoryID: foreign, BaseBranch: "x"}, kanban.CodeValidation)
	h.refuse(sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{RepositoryURL: "https://example.com/b.git", BaseBranch: "main"}, kanban.CodeForbidden)
	call[kanban.Repository](h, operator, kanban.ActionRepositoryCreate, RepositoryCreateIn{RemoteURL: "https://example.com/b.git"})
	call[TaskBranchOut](h, sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{RepositoryURL: "https://example.com/b.git", BaseBranch: "main"})
	if msg := h.refuse(sess, kanban.ActionTaskRepositorySetBaseBranch, BaseBranchIn{BaseBranch: "x"}, kanban.CodeValidation); !strings.Contains(msg, "several") {
		t.Errorf("set_base_branch without repository_id on two repositories: got %q", msg)
	}
}

func TestAddBranchToTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	me := h.task("me")
	kid := h.child(me, "kid")
	sib := h.task("sibling")
	sess := h.session(me, kanban.ModeTask)
	src := realDir(t)
	checkRepositoryAddRefusals(t, h, sess, sib, me, src)
	reg := call[TaskBranchOut](h, operator, kanban.ActionTaskRepositoryAdd, TaskBranchIn{TaskID: me.ID, LocalPath: src + "/sub/..", BaseBranch: "main"})
	if !reg.RepositoryCreated || reg.Repository.LocalPath != src {
		t.Fatalf("the operator registering: got %+v, want a new repository at the canonical path", reg)
	}
	out := call[TaskBranchOut](h, sess, kanban.ActionTaskRepositoryAdd, TaskBranchIn{LocalPath: src, BaseBranch: "develop", CheckoutBranch: "feat/x"})
	if out.RepositoryCreated || out.Repository.ID != reg.Repository.ID || out.Repository.LocalPath != "" || out.TaskRepository.TaskID != me.ID ||
		out.TaskRepository.BaseBranch != "develop" || out.TaskRepository.CheckoutBranch != "feat/x" {
		t.Fatalf("task.repository.add: got %+v, want the registered repository, without its local path, linked to the task", out)
	}
	if cfg := call[TaskBranchOut](h, h.session(me, kanban.ModeConfig), kanban.ActionTaskRepositoryAdd, TaskBranchIn{RepositoryID: reg.Repository.ID,
		BaseBranch: "develop", CheckoutBranch: "feat/x"}); cfg.Repository.LocalPath != src {
		t.Errorf("a config-mode session: got local path %q, want the operator's delegate to see it", cfg.Repository.LocalPath)
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

	checkSetBaseBranch(t, h, sess, sib, out.Repository.ID, repo.ID)
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

	api, docs := realDir(t), realDir(t)
	in := SourcesAddIn{Sources: []SourceIn{repo(SourceIn{LocalPath: api, BaseBranch: "trunk"}),
		repo(SourceIn{GitHubURL: "https://github.com/acme/web", CheckoutBranch: "pr-7"}), {Kind: kanban.SourceFolder, LocalPath: docs, DisplayName: "Docs"}}}
	// A session registers nothing; the operator's refusal of one source
	// registers none of the others.
	h.refuse(sess, kanban.ActionWorkspaceSourceAdd, in, kanban.CodeForbidden)
	bad := SourcesAddIn{TaskID: me.ID, Sources: append(append([]SourceIn{}, in.Sources...), SourceIn{Kind: kanban.SourceFolder, LocalPath: "/proc/self/root"})}
	if msg := h.refuse(operator, kanban.ActionWorkspaceSourceAdd, bad, kanban.CodeValidation); !strings.HasPrefix(msg, "sources[3].local_path: is, contains or lies inside") {
		t.Errorf("the operator registering /proc/self/root: got %q", msg)
	}
	if n := h.count("repositories"); n != 0 {
		t.Fatalf("refused calls registered %d repositories", n)
	}
	in.TaskID = me.ID
	out := call[SourcesAddOut](h, operator, kanban.ActionWorkspaceSourceAdd, in)
	if out.TaskID != me.ID || len(out.Items) != 3 || !out.Items[0].Created || out.Items[0].TaskRepository.BaseBranch != "trunk" ||
		out.Items[0].Repository.LocalPath != api ||
		out.Items[1].Repository.RemoteURL != "https://github.com/acme/web" || out.Items[1].TaskRepository.CheckoutBranch != "pr-7" ||
		out.Items[2].Kind != kanban.SourceFolder || out.Items[2].Repository.Name != "Docs" {
		t.Fatalf("workspace.source.add: got %+v, want three sources attached to the task", out)
	}
	in.TaskID = ""
	links, err := h.st.ListTaskRepositories(context.Background(), me.ID)
	if err != nil || len(links) != 3 {
		t.Fatalf("task links: got %d, %v, want 3", len(links), err)
	}
	again := call[SourcesAddOut](h, sess, kanban.ActionWorkspaceSourceAdd, in)
	if again.Items[0].Created || again.Items[0].Repository.ID != out.Items[0].Repository.ID || h.count("repositories") != 3 ||
		again.Items[0].Repository.LocalPath != "" || again.Items[2].Repository.LocalPath != "" {
		t.Errorf("the session naming registered sources: got %+v, want the same sources, created false, no local paths", again)
	}
	byID := call[SourcesAddOut](h, sess, kanban.ActionWorkspaceSourceAdd, SourcesAddIn{TaskID: h.child(me, "kid").ID,
		Sources: []SourceIn{repo(SourceIn{RepositoryID: out.Items[0].Repository.ID})}})
	if byID.Items[0].Created || byID.Items[0].TaskRepository.BaseBranch != "main" {
		t.Errorf("by repository_id on a subtask: got %+v, want linked from the default branch", byID)
	}
}
