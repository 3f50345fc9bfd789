package prwatch

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// The watcher's tests run it against Prism serving GitHub's OpenAPI
// description with request validation on, behind forgetest's stateful
// layer (which holds what Prism cannot: a merged pull request stays
// merged; reviews, comments, checks and logs are what each test sets, and
// the test changes them between polls), and against a real store.

// One Prism serves every test (it takes seconds to load GitHub's
// description); each test gets its own stateful layer in front.
var shared struct {
	once  sync.Once
	prism *forgetest.Prism
	err   error
}

func TestMain(m *testing.M) {
	pgtest.Main(m, func() {
		if shared.prism != nil {
			if err := shared.prism.Close(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	})
}

const (
	apiToken = "ghp_ApiT0kenOfTheServer0123456789abcdef"
	owner    = "octo-org"
	repoName = "demo.app"
	sha1     = "1111111111111111111111111111111111111111"
	sha2     = "2222222222222222222222222222222222222222"
	branch   = "kandev/0a1b2c3d"
)

// mockGitHub returns a stateful GitHub over the shared Prism. Without the
// mocks installed the test is skipped, unless KANDEV_FORGE_TESTS=1.
func mockGitHub(t testing.TB) *forgetest.GitHub {
	t.Helper()
	shared.once.Do(func() { shared.prism, shared.err = forgetest.StartPrism(context.Background()) })
	if shared.err != nil {
		if os.Getenv(forgetest.EnvRequired) == "1" {
			t.Fatalf("the GitHub API mock: %v", shared.err)
		}
		t.Skipf("the GitHub API mock is not available (%v); make -C tests/forge install", shared.err)
	}
	return forgetest.NewGitHub(t, shared.prism, apiToken)
}

func newClient(t testing.TB, gh *forgetest.GitHub) *forge.GitHub {
	t.Helper()
	tok, err := credential.Parse(apiToken)
	if err != nil {
		t.Fatal(err)
	}
	c, err := forge.NewGitHub(forge.GitHubConfig{APIURL: gh.URL, Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recorder is a Sink that keeps what it was given; fail, when set, makes
// a delivery fail.
type recorder struct {
	mu     sync.Mutex
	events []Event
	fail   func(Event) error
}

func (r *recorder) Deliver(_ context.Context, e Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		if err := r.fail(e); err != nil {
			return err
		}
	}
	r.events = append(r.events, e)
	return nil
}

func (r *recorder) got() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *recorder) of(k Kind) []Event {
	var out []Event
	for _, e := range r.got() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) kinds() string {
	var ks []string
	for _, e := range r.got() {
		ks = append(ks, string(e.Kind))
	}
	return strings.Join(ks, " ")
}

// env is a task with a pull request open on the mock, its store record,
// and a watcher of it.
type env struct {
	t      *testing.T
	gh     *forgetest.GitHub
	st     *store.Store
	client *forge.GitHub
	sink   *recorder
	w      *Watcher
	task   *kanban.Task
	repo   *kanban.Repository
	pr     *kanban.PullRequest
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newEnvOn(t, st)
}

// newEnvOn is newEnv on the store st (closed when t ends).
func newEnvOn(t *testing.T, st *store.Store) *env {
	t.Helper()
	gh := mockGitHub(t)
	t.Cleanup(func() { _ = st.Close() })
	e := &env{t: t, gh: gh, st: st, client: newClient(t, gh), sink: &recorder{}}
	e.seed(st)
	e.w = e.watcher(st, e.client, e.sink, "backend-1")
	return e
}

// seed makes the task, its repository and its pull request (opened on the
// mock, linked in st).
func (e *env) seed(st *store.Store) {
	t, ctx := e.t, context.Background()
	ws, err := st.CreateWorkspace(ctx, "Ship", "")
	must(t, err)
	wf, err := st.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: "Kanban"})
	must(t, err)
	_, err = st.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: wf.ID, Name: "Review", AllowManualMove: true})
	must(t, err)
	e.repo, err = st.CreateRepository(ctx, kanban.Repository{WorkspaceID: ws.ID, Name: repoName, RemoteURL: "https://github.com/" + owner + "/" + repoName + ".git"})
	must(t, err)
	e.task, _, err = st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: ws.ID, Title: "Add the login form",
		Repository: &kanban.TaskRepositoryInput{RepositoryID: e.repo.ID}})
	must(t, err)
	e.gh.SetBranch(owner, repoName, "main", sha2)
	e.gh.SetBranch(owner, repoName, branch, sha1)
	opened, err := e.client.OpenPR(ctx, forge.Repo{Owner: owner, Name: repoName}, forge.NewPR{Title: "Add the login form", Head: branch, Base: "main"})
	must(t, err)
	e.pr, err = st.LinkPullRequest(ctx, kanban.PullRequest{TaskID: e.task.ID, RepositoryID: e.repo.ID, Forge: kanban.ForgeGitHub,
		ForgeRepo: owner + "/" + repoName, Number: opened.Number, URL: opened.URL, Title: opened.Title, HeadBranch: branch, BaseBranch: "main",
		State: kanban.PROpen, HeadSHA: opened.HeadSHA})
	must(t, err)
}

// watcher is a watcher over st and client whose pull requests are due at
// every step.
func (e *env) watcher(st *store.Store, client forge.Forge, sink Sink, backend string) *Watcher {
	e.t.Helper()
	w, err := New(Config{Store: st, Forges: ForgesFunc(func(context.Context, kanban.PullRequest) (forge.Forge, error) { return client, nil }),
		Sink: sink, Backend: backend, Interval: time.Nanosecond, Backoff: forge.Backoff{Base: time.Millisecond, Max: 10 * time.Millisecond}})
	must(e.t, err)
	return w
}

// steps runs n rounds of w.
func (e *env) steps(w *Watcher, n int) {
	e.t.Helper()
	for range n {
		w.step(e.t.Context())
	}
}

// set changes the task's automation switches on its pull request.
func (e *env) set(u kanban.PRAutomationUpdate) {
	e.t.Helper()
	_, err := e.st.UpdatePRAutomation(context.Background(), e.task.ID, kanban.ForgeGitHub, u)
	must(e.t, err)
}

func (e *env) record() *kanban.PullRequest {
	e.t.Helper()
	p, err := e.st.GetPullRequest(context.Background(), e.pr.ID)
	must(e.t, err)
	return p
}

// journal returns the pull request's journal as "key=state" words.
func (e *env) journal() string {
	e.t.Helper()
	l, err := e.st.ListPREvents(context.Background(), e.pr.ID, kanban.Page{Limit: kanban.MaxLimit})
	must(e.t, err)
	var out []string
	for _, ev := range l.Items {
		out = append(out, ev.Key+"="+string(ev.State))
	}
	return strings.Join(out, " ")
}

// requestsSince returns the API requests (method and path) the mock got
// after the first n.
func (e *env) requestsSince(n int) []forgetest.Seen { return e.gh.Requests()[n:] }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var on = true
