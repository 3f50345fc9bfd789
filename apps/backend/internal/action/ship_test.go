package action

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forgeconf"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// The ship actions run on real parts: a real store, a real repository
// with the task's worktree as the runtime makes it, a bare remote served
// by `git http-backend` over smart HTTP on loopback with Basic auth
// checked, and the forge API — GitHub as Prism serving GitHub's OpenAPI
// description with request validation on, behind forgetest's stateful
// layer (Prism is stateless: the layer holds the pull request, and the
// test tells it which branches exist, as a push would); GitLab as
// forgetest's fixture server, whose shapes cite docs.gitlab.com (no
// official OpenAPI description of GitLab's v4 REST API to mock from).

// shipToken is the forge account's one token: the remote takes it as
// the Basic password of a push, the forge's API as its bearer token.
const (
	shipToken = "ghp_ShipT0kenOfTheServer0123456789abcdef"
	shipOwner = "octo-org"
	shipRepo  = "demo.app"
)

var shipPrism struct {
	once  sync.Once
	prism *forgetest.Prism
	err   error
}

// TestMain stops the package's Prism, if a test started it.
func TestMain(m *testing.M) {
	code := m.Run()
	if shipPrism.prism != nil {
		_ = shipPrism.prism.Close()
	}
	os.Exit(code)
}

// shipGitHub returns a stateful GitHub over one Prism for the package
// (stopped by TestMain).
func shipGitHub(t *testing.T) *forgetest.GitHub {
	t.Helper()
	shipPrism.once.Do(func() { shipPrism.prism, shipPrism.err = forgetest.StartPrism(context.Background()) })
	if shipPrism.err != nil {
		if os.Getenv(forgetest.EnvRequired) == "1" {
			t.Fatalf("the GitHub API mock: %v", shipPrism.err)
		}
		t.Skipf("the GitHub API mock is not available (%v); make -C tests/forge install", shipPrism.err)
	}
	return forgetest.NewGitHub(t, shipPrism.prism, shipToken)
}

// shipFix is a task with its worktree, a remote and a forge account.
type shipFix struct {
	*harness
	events []kanban.DomainEvent
	mu     sync.Mutex
	repo   *gittest.Repo
	remote *gittest.Remote
	task   *kanban.Task
	repoID string
	wt     string
	branch string
	policy *fsguard.Policy
	ship   *Ship
	git    *worktree.Git
}

// newShipFix makes the fixture; entry is the forge account of the remote
// (its remote_url is filled in).
func newShipFix(t *testing.T, entry forgeconf.Entry) *shipFix {
	t.Helper()
	h := newHarness(t)
	f := &shipFix{harness: h}
	f.repo = gittest.NewRepo(t, map[string]string{"README.md": "hello\n", "src/app.go": "package app\n"})
	f.remote = gittest.NewRemote(t, gittest.RemoteOptions{Token: shipToken})
	f.repo.Git(t, "push", "--quiet", f.remote.Dir, "main")
	policy := testPolicy(t)
	entry.RemoteURL = f.remote.URL
	set, err := forgeconf.New(forgeconf.File{Repositories: []forgeconf.Entry{entry}}, forgeconf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	git, err := worktree.NewGit(worktree.Config{Identity: forgeconf.DefaultIdentity})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = git.Close() })
	ev := &kanban.DomainEvents{}
	ev.React(func(e kanban.DomainEvent) { f.mu.Lock(); f.events = append(f.events, e); f.mu.Unlock() })
	f.policy, f.ship, f.git = policy, &Ship{Forges: set, PRs: h.st}, git
	h.reg, _ = mustNew(t, Deps{Store: h.st, Publisher: h.pub, FS: policy, Events: ev, Ship: f.ship, Git: git})
	ctx := context.Background()
	r, err := h.st.CreateRepository(ctx, kanban.Repository{WorkspaceID: h.ws, LocalPath: f.repo.Dir, RemoteURL: f.remote.URL})
	if err != nil {
		t.Fatal(err)
	}
	f.repoID, f.task = r.ID, h.task("ship it")
	if _, err := h.st.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: f.task.ID, RepositoryID: r.ID, BaseBranch: "main"}); err != nil {
		t.Fatal(err)
	}
	short := strings.ReplaceAll(f.task.ID, "-", "")[:8]
	f.branch, f.wt = "kandev/"+short, filepath.Join(policy.DataDir(), "worktrees", short)
	if err := os.MkdirAll(filepath.Dir(f.wt), 0o700); err != nil {
		t.Fatal(err)
	}
	f.repo.Git(t, "worktree", "add", "--quiet", "-b", f.branch, f.wt, "main")
	if err := h.st.SaveWorktree(ctx, kanban.Worktree{TaskID: f.task.ID, RepositoryID: r.ID, Path: f.wt, Branch: f.branch}); err != nil {
		t.Fatal(err)
	}
	return f
}

// shipEntry is a forge account whose token is in a secret file.
func shipEntry(t *testing.T, kind kanban.ForgeKind, api, repo string) forgeconf.Entry {
	t.Helper()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(shipToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return forgeconf.Entry{Forge: kind, APIURL: api, Repo: repo, Source: credential.Source{File: file}}
}

// write changes a file of the worktree as an agent would.
func (f *shipFix) write(p, content string) { gittest.WriteFile(f.t, f.wt, p, content) }

// merged counts the PullRequestMerged events.
func (f *shipFix) merged() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, e := range f.events {
		if _, ok := e.(kanban.PullRequestMerged); ok {
			n++
		}
	}
	return n
}

// linked counts the PullRequestsChanged events of the fixture's task
// (what wakes the PR watcher).
func (f *shipFix) linked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, e := range f.events {
		if c, ok := e.(kanban.PullRequestsChanged); ok && c.TaskID == f.task.ID {
			n++
		}
	}
	return n
}

// shipped commits and pushes a change and returns the pushed commit.
func (f *shipFix) shipped() string {
	f.t.Helper()
	f.write("src/app.go", "package app\n\nfunc Answer() int { return 42 }\n")
	c := call[CommitOut](f.harness, operator, kanban.ActionTaskCommit, map[string]any{"task_id": f.task.ID, "message": "Add Answer"})
	if c.Commit == nil || c.Branch != f.branch || c.Commit.Subject != "Add Answer" || c.Commit.AuthorName != "Kandev" {
		f.t.Fatalf("commit: %+v", c)
	}
	p := call[PushOut](f.harness, operator, kanban.ActionTaskPush, map[string]any{"task_id": f.task.ID})
	if p.Status != "created" || p.SHA != c.Commit.SHA || f.remote.Ref(f.t, "refs/heads/"+f.branch) != c.Commit.SHA {
		f.t.Fatalf("push: %+v", p)
	}
	for _, r := range f.remote.Requests() {
		if strings.Contains(r.URL, "git-receive-pack") && r.Method == "POST" && !r.Authorized {
			f.t.Fatal("the push was not authenticated with the configured token")
		}
	}
	return c.Commit.SHA
}

// A task's change goes from the worktree to a merged GitHub pull request:
// commit, push over smart HTTP with the token, open, read its checks and
// reviews, merge squashed; the merge is told to the engine once.
func TestShipGitHub(t *testing.T) {
	gh := shipGitHub(t)
	f := newShipFix(t, shipEntry(t, kanban.ForgeGitHub, gh.URL, shipOwner+"/"+shipRepo))
	sha := f.shipped()
	gh.SetBranch(shipOwner, shipRepo, f.branch, sha)
	gh.SetBranch(shipOwner, shipRepo, "main", f.repo.Head(t, "main"))
	pr := call[kanban.PullRequest](f.harness, operator, kanban.ActionTaskPROpen,
		map[string]any{"task_id": f.task.ID, "title": "Add Answer", "body": "Answers."})
	if pr.State != kanban.PROpen || pr.HeadBranch != f.branch || pr.BaseBranch != "main" || pr.HeadSHA != sha || pr.Forge != kanban.ForgeGitHub {
		t.Fatalf("opened: %+v", pr)
	}
	if !f.pub.has(WorkspaceTopic(f.ws), kanban.EventPullRequestUpdated.Name()) {
		t.Fatal("no task.pr_updated event")
	}
	if n := f.linked(); n != 1 {
		t.Fatalf("%d PullRequestsChanged events after the link, want 1 (the watcher is woken)", n)
	}
	gh.SetChecks(shipOwner, shipRepo, sha, forgetest.CheckRun{Name: "test", Status: "completed", Conclusion: "success"})
	gh.AddReview(shipOwner, shipRepo, pr.Number, forgetest.Review{User: "rev", State: "APPROVED", CommitID: sha})
	got := call[kanban.PullRequest](f.harness, operator, kanban.ActionTaskPRGet, map[string]any{"id": pr.ID})
	if got.Checks != kanban.ChecksPassing || got.Review != kanban.ReviewApproved || got.State != kanban.PROpen {
		t.Fatalf("read: checks %s, review %s, state %s", got.Checks, got.Review, got.State)
	}
	done := call[kanban.PullRequest](f.harness, operator, kanban.ActionTaskPRMerge, map[string]any{"id": pr.ID, "method": "squash"})
	if done.State != kanban.PRMerged {
		t.Fatalf("merged: %+v", done)
	}
	if st, _ := gh.PR(shipOwner, shipRepo, pr.Number); !st.Merged || st.MergeMethod != "squash" {
		t.Fatalf("on the forge: merged %v, method %q", st.Merged, st.MergeMethod)
	}
	f.refuse(operator, kanban.ActionTaskPRMerge, map[string]any{"id": pr.ID, "method": "merge"}, kanban.CodeConflict)
	call[kanban.PullRequest](f.harness, operator, kanban.ActionTaskPRGet, map[string]any{"id": pr.ID})
	if n := f.merged(); n != 1 {
		t.Fatalf("%d PullRequestMerged events, want 1", n)
	}
	list := call[kanban.List[kanban.PullRequest]](f.harness, operator, kanban.ActionTaskPRList, map[string]any{"task_id": f.task.ID})
	if len(list.Items) != 1 || list.Items[0].State != kanban.PRMerged {
		t.Fatalf("list: %+v", list)
	}
}

// The same against GitLab (the fixture server): a merge request, its
// approval and pipeline, merged; and a merge the forge finds on a read.
func TestShipGitLab(t *testing.T) {
	gl := forgetest.NewGitLab(t, shipToken)
	f := newShipFix(t, shipEntry(t, kanban.ForgeGitLab, gl.URL, "group/sub/demo"))
	sha := f.shipped()
	gl.AddProject("group/sub/demo", map[string]string{"main": f.repo.Head(t, "main"), f.branch: sha})
	pr := call[kanban.PullRequest](f.harness, operator, kanban.ActionTaskPROpen, map[string]any{"task_id": f.task.ID, "title": "Add Answer"})
	if pr.State != kanban.PROpen || pr.HeadSHA != sha || pr.Forge != kanban.ForgeGitLab || pr.ForgeRepo != "group/sub/demo" {
		t.Fatalf("opened: %+v", pr)
	}
	refused := f.refuse(operator, kanban.ActionTaskPRMerge, map[string]any{"id": pr.ID, "method": "merge"}, kanban.CodeConflict)
	if strings.Contains(refused, shipToken) {
		t.Fatal("the refusal echoes the token")
	}
	gl.Approve("group/sub/demo", pr.Number, forgetest.GitLabApproval{UserID: 7, Username: "rev"})
	gl.SetStatuses("group/sub/demo", sha, forgetest.GitLabStatus{Name: "test", Status: "success", Job: true})
	got := call[kanban.PullRequest](f.harness, operator, kanban.ActionTaskPRGet, map[string]any{"id": pr.ID})
	if got.Checks != kanban.ChecksPassing || got.Review != kanban.ReviewApproved {
		t.Fatalf("read: checks %s, review %s", got.Checks, got.Review)
	}
	gl.UpdateMR("group/sub/demo", pr.Number, func(mr *forgetest.GitLabMR) { mr.State = "merged" }) // merged on GitLab
	got = call[kanban.PullRequest](f.harness, operator, kanban.ActionTaskPRGet, map[string]any{"id": pr.ID})
	if got.State != kanban.PRMerged || f.merged() != 1 {
		t.Fatalf("read after a merge on GitLab: state %s, %d merge events", got.State, f.merged())
	}
}
