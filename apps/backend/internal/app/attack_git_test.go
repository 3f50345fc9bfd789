package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// Issue 24, attack 2 (its git half): checkout_branch and base_branch
// accepted --upload-pack=…, -b, .., a..b, control characters, $(…) and
// refs/heads/../../x, and remote URLs any transport git knows (ext::, fd::,
// file://). Each name below carries CANARY so that an echo shows.
var hostileBranches = []string{
	"--upload-pack=touch CANARY", "-bCANARY", "CANARY..main", "CANARYa..b", "CANARY\x01x", "CANARY\nx", "CANARY\x7f",
	"$(touch CANARY)", "refs/heads/../../CANARY", "CANARY@{1}", "CANARY.lock", "CANARY/x.lock", "CANARY/", "CANARY//x",
	"/CANARY", ".CANARY", "CANARY/.x", "CANARY.", "CANARY x", "CANARY~1", "CANARY^", "CANARY:x", "CANARY?", "CANARY*",
	"CANARY[x", `CANARY\x`, "CANARY" + strings.Repeat("x", 294), "CANARY\u202ex",
}

var hostileRemotes = []string{
	"ext::sh -c touch% /tmp/CANARY", "ext::sh%20-c%20CANARY", "fd::3/CANARY", "fd::17", "-uCANARY", "--upload-pack=CANARY",
	"file:///etc/CANARY", "file://localhost/CANARY", "/tmp/CANARY", "../CANARY", "http://example.com/CANARY",
	"http://10.0.0.1/CANARY", "https://user:CANARY@example.com/x.git", "https://CANARY@example.com/x.git",
	"ssh://-oProxyCommand=CANARY/x", "ssh://git@-CANARY/x", "-oProxyCommand=CANARY:x", "git@example.com:-CANARY",
	"https://example.com/CANARY\n", "https://example.com/\x00CANARY", "https://example.com/CANARY x", "git://example.com/CANARY",
	"gopher://example.com/CANARY", "CANARY",
}

// gitRefusal is one way a caller hands git text to the backend.
type gitRefusal struct {
	what   string
	c      *client.Client // nil: WebSocket only
	tool   string
	ws     *ws.Client
	action kanban.Action
	args   string
	// forbiddenOK: a session registering a new repository may be refused
	// as FORBIDDEN before the URL is looked at (registration is the
	// operator's).
	forbiddenOK bool
}

// refusedNoEcho: the call is refused with VALIDATION_ERROR (or FORBIDDEN
// when allowed), echoes nothing of CANARY, and changes nothing.
func refusedNoEcho(e *env, r gitRefusal) {
	e.t.Helper()
	ok := func(code kanban.Code) bool {
		return code == kanban.CodeValidation || r.forbiddenOK && code == kanban.CodeForbidden
	}
	before := e.fingerprint()
	if r.c != nil {
		res := e.call(r.c, r.tool, r.args)
		code, _, _ := strings.Cut(text(res), ":")
		if strings.HasPrefix(text(res), "invalid arguments for ") { // the contract's refusal
			code = string(kanban.CodeValidation)
		}
		if !res.IsError || !ok(kanban.Code(code)) || strings.Contains(text(res), "CANARY") {
			e.t.Fatalf("%s over MCP (%s %s): got error=%v %q, want VALIDATION_ERROR without the value", r.what, r.tool, r.args, res.IsError, text(res))
		}
	}
	err := r.ws.Call(context.Background(), r.action, json.RawMessage(r.args), nil)
	ke, isKE := kanban.AsError(err)
	if !isKE || !ok(ke.Code) || strings.Contains(ke.Message, "CANARY") || strings.Contains(ke.Field, "CANARY") {
		e.t.Fatalf("%s over the WebSocket (%s %s): got %v, want VALIDATION_ERROR without the value", r.what, r.action, r.args, err)
	}
	if e.fingerprint() != before {
		e.t.Fatalf("%s (%s): the refused call changed the database", r.what, r.args)
	}
}

// gitEnv is a backend with a repository registered by the operator and
// linked to a task-mode session's task.
type gitEnv struct {
	e      *env
	s      *session
	sws    *ws.Client
	op     *client.Client
	opws   *ws.Client
	repoID string
}

func newGitEnv(t *testing.T) gitEnv {
	e := newEnv(t)
	g := gitEnv{e: e, s: e.sessionMCP(kanban.ModeTask, ""), op: e.operatorMCP(), opws: e.wsClient(e.token, nil)}
	g.sws = e.wsClient(g.s.Token, nil)
	var repo kanban.Repository
	e.dispatch(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{RemoteURL: "https://example.com/acme/app.git"}, &repo)
	g.repoID = repo.ID
	callJSON(e, g.s.Client, "add_branch_to_task_kandev", fmt.Sprintf(`{"repository_id":%q,"base_branch":"main"}`, repo.ID), &action.TaskBranchOut{})
	return g
}

func TestAttackHostileBranchNamesRefused(t *testing.T) {
	t.Parallel()
	g := newGitEnv(t)
	e := g.e
	for _, name := range hostileBranches {
		n, err := json.Marshal(name)
		if err != nil {
			t.Fatal(err)
		}
		repo := g.repoID
		for _, r := range []gitRefusal{
			{what: "base_branch", c: g.s.Client, tool: "add_branch_to_task_kandev", ws: g.sws, action: kanban.ActionTaskRepositoryAdd,
				args: fmt.Sprintf(`{"repository_id":%q,"base_branch":%s}`, repo, n)},
			{what: "checkout_branch", c: g.s.Client, tool: "add_branch_to_task_kandev", ws: g.sws, action: kanban.ActionTaskRepositoryAdd,
				args: fmt.Sprintf(`{"repository_id":%q,"checkout_branch":%s}`, repo, n)},
			{what: "a new base branch", c: g.s.Client, tool: "update_repository_base_branch_kandev", ws: g.sws, action: kanban.ActionTaskRepositorySetBaseBranch,
				args: fmt.Sprintf(`{"repository_id":%q,"base_branch":%s}`, repo, n)},
			{what: "a source's checkout_branch", c: g.s.Client, tool: "add_workspace_sources_kandev", ws: g.sws, action: kanban.ActionWorkspaceSourceAdd,
				args: fmt.Sprintf(`{"sources":[{"kind":"repository","repository_id":%q,"checkout_branch":%s}]}`, repo, n)},
			{what: "a new task's base_branch", c: g.s.Client, tool: "create_task_kandev", ws: g.sws, action: kanban.ActionTaskCreate,
				args: fmt.Sprintf(`{"title":"t","start_agent":false,"repository_id":%q,"base_branch":%s}`, repo, n)},
			{what: "a new task's base_branch (operator)", c: g.op, tool: "create_task_kandev", ws: g.opws, action: kanban.ActionTaskCreate,
				args: fmt.Sprintf(`{"title":"t","start_agent":false,"repository_id":%q,"base_branch":%s}`, repo, n)},
			{what: "a repository's default_branch (operator)", ws: g.opws, action: kanban.ActionRepositoryUpdate,
				args: fmt.Sprintf(`{"id":%q,"default_branch":%s}`, repo, n)},
			{what: "a new repository's default_branch (operator)", ws: g.opws, action: kanban.ActionRepositoryCreate,
				args: fmt.Sprintf(`{"remote_url":"https://example.com/acme/other.git","default_branch":%s}`, n)},
		} {
			refusedNoEcho(e, r)
		}
	}
	// Real branch names still pass.
	for _, name := range []string{"main", "feature/login-form", "release/1.2.3", "fix#42", "user@host", "über/straße", "v2+build"} {
		callJSON(e, g.s.Client, "update_repository_base_branch_kandev", fmt.Sprintf(`{"repository_id":%q,"base_branch":%q}`, g.repoID, name), &kanban.TaskRepository{})
	}
}

func TestAttackHostileRemoteURLsRefused(t *testing.T) {
	t.Parallel()
	g := newGitEnv(t)
	e := g.e
	for _, u := range hostileRemotes {
		q, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []gitRefusal{
			{what: "repository_url", c: g.s.Client, tool: "add_branch_to_task_kandev", ws: g.sws, action: kanban.ActionTaskRepositoryAdd,
				args: fmt.Sprintf(`{"repository_url":%s}`, q), forbiddenOK: true},
			{what: "a source's remote_url", c: g.s.Client, tool: "add_workspace_sources_kandev", ws: g.sws, action: kanban.ActionWorkspaceSourceAdd,
				args: fmt.Sprintf(`{"sources":[{"kind":"repository","remote_url":%s}]}`, q), forbiddenOK: true},
			{what: "a new task's repository_url", c: g.s.Client, tool: "create_task_kandev", ws: g.sws, action: kanban.ActionTaskCreate,
				args: fmt.Sprintf(`{"title":"t","start_agent":false,"repository_url":%s}`, q), forbiddenOK: true},
			{what: "a new task's repository_url (operator)", c: g.op, tool: "create_task_kandev", ws: g.opws, action: kanban.ActionTaskCreate,
				args: fmt.Sprintf(`{"title":"t","start_agent":false,"repository_url":%s}`, q)},
			{what: "a new repository (operator)", ws: g.opws, action: kanban.ActionRepositoryCreate,
				args: fmt.Sprintf(`{"remote_url":%s}`, q)},
		} {
			refusedNoEcho(e, r)
		}
	}
	// github_url must be https://github.com/… and a remote URL.
	refusedNoEcho(e, gitRefusal{what: "github_url", c: g.s.Client, tool: "add_workspace_sources_kandev", ws: g.sws, action: kanban.ActionWorkspaceSourceAdd,
		args: `{"sources":[{"kind":"repository","github_url":"https://github.com/o/CANARY\n"}]}`, forbiddenOK: true})
	// The forms D7 admits are registered by the operator.
	for _, u := range []string{"https://example.com/a/b.git", "ssh://git@example.com:2222/a/b.git", "git@github.com:a/b.git",
		"example.com:a/b.git", "http://127.0.0.1:8080/a.git", "http://localhost/a.git", "http://[::1]/a.git"} {
		var repo kanban.Repository
		e.dispatch(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{RemoteURL: u}, &repo)
		if repo.RemoteURL != u {
			t.Fatalf("remote %s: got %q stored", u, repo.RemoteURL)
		}
	}
}
